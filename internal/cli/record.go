package cli

import (
	"errors"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	stdio "io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// recordOptions are the flags of `traceforge record`.
type recordOptions struct {
	IO      *IOStreams
	Factory *Factory

	Listen      string
	listenSet   bool
	Upstreams   map[provider.Name]*string // --<provider>-upstream
	Named       []string                  // --upstream NAME=URL
	AllowHosts  []string
	Prune       bool
	OnlyMissing bool
	DenyBypass  bool
	Sync        string
	Command     []string
}

func newRecordCmd(f *Factory, runF func(*recordOptions) error) *cobra.Command {
	if runF == nil {
		runF = recordRun
	}
	opts := &recordOptions{IO: f.IO, Factory: f, Upstreams: map[provider.Name]*string{}}
	cmd := &cobra.Command{
		Use:   "record [flags] [-- COMMAND ARGS...]",
		Short: "Record the application's LLM calls into snapshots through a local proxy",
		Long: wrap(`record runs a local proxy between the application and its LLM provider. Every
call is forwarded upstream (API keys pass through untouched and are never
stored), and every LLM call of a recorded route (` + providerTitles() + `; docs/record.md lists them) becomes one checked snapshot in the snapshot
folder, written as the call completes.

With a command, record listens on a free loopback port, runs the command with
` + baseURLEnvs(", ") + ` and TRACEFORGE_URL pointing at it, and stops when the command exits. Without a command it serves in the foreground (default
127.0.0.1:8787), prints the exports to use, and stops on Ctrl-C or SIGTERM.

Each call must say where it was made with the X-Traceforge-Source header
(traceforge.SourceTransport in Go; docs/sources.md for Node and Python).

Upstreams: --` + strings.Join(upstreamFlagList(), " / --") + `, else TRACEFORGE_<PROVIDER>_UPSTREAM, else the
` + baseURLEnvs(" / ") + ` already set, else each provider's default (` + defaultUpstreams() + `).

Exit codes: 0 every call snapshotted (with a command: the command's code),
1 a call could not be snapshotted or a snapshot was refused, 2 usage or
configuration error (flags, config, lock held, bind failure, command not found).`),
		RunE: func(cmd *cobra.Command, args []string) error {
			command, err := commandAfterDash(cmd, args, "record")
			if err != nil {
				return err
			}
			opts.Command = command
			opts.listenSet = cmd.Flags().Changed("listen")
			return runF(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", serve.DefaultListen, "address to serve on without a command (a non-loopback address draws a warning)")
	upstreamFlags(fl, opts.Upstreams, "")
	namedUpstreamFlag(fl, &opts.Named)
	fl.StringSliceVar(&opts.AllowHosts, "allow-host", nil, "also accept this Host header name (repeatable); loopback names are always accepted")
	fl.BoolVar(&opts.Prune, "prune", false, "with a command: remove the snapshots the run did not request (only when every call was snapshotted and the command exited 0)")
	fl.BoolVar(&opts.OnlyMissing, "only-missing", false, "serve calls that already have a snapshot from the set, record only new ones")
	fl.StringVar(&opts.Sync, "sync", string(record.SyncAfterAnswer), "when each snapshot is fsync'd: after-answer (renamed into place before the answer completes, fsync'd in shared batches right after; survives kill -9, an OS crash may lose the last few ms) or before-answer (fsync'd before the answer completes; survives power loss, ~0.6 ms more per call)")
	fl.BoolVar(&opts.DenyBypass, "deny-bypass", false, "with a command: also set HTTP(S)_PROXY to traceforge and refuse (403), list and fail every call that escapes the base URL")
	return cmd
}

// recordGrace is how long calls in flight may take to finish when record
// stops (their snapshots are still written).
const recordGrace = 30 * time.Second

func recordRun(o *recordOptions) error {
	io := o.IO
	// Everything record prints goes through the redacting writer (the
	// command's own output does not).
	stderr := render.NewLineRedactor(io.ErrOut)
	if o.Prune && len(o.Command) == 0 {
		return usageErr("run: traceforge record --prune -- COMMAND ARGS...", "--prune needs a command: only a complete run can tell which snapshots are unused")
	}
	if o.DenyBypass && len(o.Command) == 0 {
		return usageErr("run: traceforge record --deny-bypass -- COMMAND ARGS...", "--deny-bypass needs a command: it sets the proxy variables of COMMAND's environment")
	}
	syncMode, err := record.ParseSync(o.Sync)
	if err != nil {
		return usageErr("run: traceforge record --sync=after-answer or --sync=before-answer", "--sync: %s", err)
	}
	ups, err := resolveUpstreams(io, o.Upstreams)
	if err != nil {
		return err
	}
	namedUps, names, err := parseNamedUpstreams(o.Named)
	if err != nil {
		return err
	}
	proj, err := o.Factory.OpenProject()
	if err != nil {
		return err
	}
	dir, display, st := proj.Dir, proj.Display, proj.Store
	unlock, err := st.Lock()
	if err != nil {
		if errors.Is(err, snapshot.ErrLocked) {
			return withCode(ExitUsage, fmt.Errorf("%s is locked: another traceforge record is running on it", display), "wait for it to finish (one record per snapshot folder at a time), or use another --dir")
		}
		return withCode(ExitUsage, fmt.Errorf("cannot lock %s: %w", display, err), "check that the folder can be created and written")
	}
	defer unlock()
	for _, t := range st.CleanTemp() {
		fmt.Fprintf(stderr, "traceforge: removed stray temp file %s (left by an interrupted run)\n", display+"/"+t)
	}

	addr := o.Listen
	if len(o.Command) > 0 && !o.listenSet {
		addr = "" // a free loopback port
	}
	ln, warning, err := serve.Listen(addr)
	if err != nil {
		return withCode(ExitUsage, err, "choose another --listen address, or stop what is using it")
	}
	defer ln.Close()
	if warning != "" {
		fmt.Fprintf(stderr, "traceforge: warning: %s\n", warning)
	}
	bound := ln.Addr().String()
	for _, u := range ups.all() {
		if loopsBack(u, bound) {
			ln.Close()
			return usageErr("point the --<provider>-upstream flags at the real API, or unset the "+
				baseURLEnvs(" / ")+" exported for an earlier traceforge server", "upstream %s is this traceforge server itself", serve.RedactURL(u))
		}
	}
	var named []string // the addresses whose host names the server answers to
	if h, _, err := net.SplitHostPort(bound); err == nil && !net.ParseIP(h).IsUnspecified() {
		named = append(named, bound)
	}
	if o.listenSet {
		named = append(named, o.Listen)
	}
	allow := serve.AllowList(o.AllowHosts, named...)

	var callLog stdio.Writer // server mode: one line per snapshot or problem as it happens
	if len(o.Command) == 0 {
		callLog = io.ErrOut // the recorder redacts its log itself
	}
	rec, err := record.New(record.Config{
		Dir:         dir,
		Display:     display,
		Upstreams:   ups.strings(),
		Named:       namedUps,
		Check:       proj.CheckOptions(),
		OnlyMissing: onlyMissing(o.OnlyMissing, dir),
		Now:         now,
		Log:         callLog,
		Sync:        syncMode,
	})
	if err != nil {
		var inv *record.InvalidSetError
		if errors.As(err, &inv) && inv.Version {
			writeVerbatimOnce(stderr, inv.Findings)
			return withCode(ExitFailed, err, "migrate the set first (the command was not started)")
		}
		if errors.As(err, &inv) {
			_ = render.WriteFindingLines(stderr, inv.Display, inv.Findings)
			return withCode(ExitFailed, err, "fix the set first (traceforge verify shows every problem); the command was not started")
		}
		return withCode(ExitFailed, err, "check the snapshot folder's permissions")
	}

	defer recordGC(io.Getenv)()

	var bypasses serve.Bypasses
	var guardOpts []serve.GuardOption
	if o.DenyBypass {
		guardOpts = append(guardOpts, serve.DenyBypass(&bypasses))
	}
	srv := serve.Start(ln, serve.Guard(rec.Handler(), allow, record.Refuse, guardOpts...))

	ctx, cancel := io.Context()
	defer cancel()
	forwarding := "forwarding to " + ups.shown()
	if len(o.Command) == 0 {
		for _, line := range registry.Exports(bound) {
			fmt.Fprintln(io.Out, line)
		}
		for _, kv := range registry.NamedEnv(bound, names) {
			fmt.Fprintln(io.Out, "export "+kv)
		}
		fmt.Fprintf(stderr, "traceforge: recording into %s; %s; Ctrl-C to stop\n", display, forwarding)
		select {
		case <-ctx.Done():
		case <-srv.Done():
		}
		srv.Stop(recordGrace)
		sum := rec.Finish()
		render.Record(stderr, sum, o.OnlyMissing)
		if sum.Failed() {
			return silentFail(ExitFailed)
		}
		return nil
	}

	fmt.Fprintf(stderr, "traceforge: recording into %s; %s\n", display, forwarding)
	env := append(registry.CommandEnv(bound), registry.NamedEnv(bound, names)...)
	if o.DenyBypass {
		env = append(env, serve.ProxyEnv(bound)...)
	}
	res, cerr := runChild(ctx, io, o.Command, env)
	srv.Stop(recordGrace)
	sum := rec.Finish()
	if cerr != nil {
		return cerr
	}
	sum.Problems = append(sum.Problems, bypassFindings(bypasses.List())...)
	render.Record(stderr, sum, o.OnlyMissing)
	if sum.Calls == 0 && len(bypasses.List()) == 0 {
		noCallsHint(stderr, bound)
	}
	failed := sum.Failed()
	if o.Prune {
		switch {
		case failed:
			fmt.Fprintln(stderr, "traceforge: --prune skipped: not every call was snapshotted")
		case res.Code != 0:
			fmt.Fprintln(stderr, "traceforge: --prune skipped: the command did not exit 0")
		default:
			removed, err := rec.Prune()
			for _, r := range removed {
				fmt.Fprintf(stderr, "pruned %s\n", r)
			}
			if err != nil {
				fmt.Fprintf(stderr, "traceforge: error: prune: %s\n", err)
				failed = true
			}
		}
	}
	fmt.Fprintln(stderr, res.Line)
	if failed {
		return silentFail(ExitFailed)
	}
	if res.Code != 0 {
		return silentFail(res.Code)
	}
	return nil
}

// loopsBack reports whether upstream u is the server bound at addr
// (DESIGN §12.10.6): an http URL on the bound port whose host is this
// machine — a loopback name or address, the unspecified address 0.0.0.0 or
// :: (a connection to it reaches this host), the machine's host name, or
// any address of a local interface — when the server listens there (or on
// every address). Host names other than those are not resolved.
func loopsBack(u *url.URL, bound string) bool {
	if u.Scheme != "http" {
		return false
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	bh, bp, err := net.SplitHostPort(bound)
	if err != nil || bp != port {
		return false
	}
	boundIP := net.ParseIP(bh)
	boundAll := boundIP != nil && boundIP.IsUnspecified()
	if strings.EqualFold(host, bh) {
		return true
	}
	ip := net.ParseIP(host)
	if serve.IsLoopbackHost(host) || (ip != nil && ip.IsUnspecified()) || isHostName(host) {
		return boundAll || serve.IsLoopbackHost(bh)
	}
	if ip == nil || !isLocalIP(ip) {
		return false
	}
	return boundAll || (boundIP != nil && boundIP.Equal(ip))
}

// isHostName reports whether host is this machine's host name.
func isHostName(host string) bool {
	name, err := os.Hostname()
	return err == nil && name != "" && strings.EqualFold(strings.TrimSuffix(host, "."), name)
}

// isLocalIP reports whether ip is an address of a local interface.
func isLocalIP(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// bypassFindings turns the calls refused under --deny-bypass into record
// problems: one per destination, listed by method, host and port.
func bypassFindings(bs []serve.Bypass) finding.Findings {
	var out finding.Findings
	for _, b := range bs {
		out = append(out, finding.Finding{Rule: "bypass", Severity: finding.Error, Outcome: result.OutcomeRefused,
			Subject: b.Method + " " + b.Target, Count: b.Count,
			Message: "the application called " + b.Target + " through the proxy variables instead of traceforge's base URL; refused with 403 (--deny-bypass), nothing was sent",
			Fix:     serve.BypassHint})
	}
	return out
}

// writeVerbatimOnce prints each distinct Verbatim text of fs (the §8
// version message, the same for the manifest and every file) once.
func writeVerbatimOnce(w stdio.Writer, fs finding.Findings) {
	seen := map[string]bool{}
	for _, f := range fs {
		if f.Verbatim != "" && !seen[f.Verbatim] {
			seen[f.Verbatim] = true
			fmt.Fprintln(w, f.Verbatim)
		}
	}
}
