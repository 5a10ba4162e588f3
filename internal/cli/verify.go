package cli

import (
	"bytes"
	"context"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/verify"
)

// verifyOptions are the flags of `traceforge verify`.
type verifyOptions struct {
	IO      *IOStreams
	Factory *Factory

	Format        string
	Output        string
	Shard         string
	FailOnUnused  bool
	DenyBypass    bool
	root          string          // the project root (for annotations of unmatched requests)
	entries       *replay.Entries // what replay keeps beside the set it serves (verify.StaticOptions.Serve)
	bypasses      serve.Bypasses
	ReplayLatency bool
	ReplayMemo    bool
	Serve         bool
	Listen        string
	AllowHosts    []string
	Live          bool
	Runs          int
	Concurrency   int
	Upstreams     map[provider.Name]*string // --<provider>-upstream (--live)
	Named         []string                  // --upstream NAME=URL: COMMAND's TRACEFORGE_<NAME>_BASE_URL
	Command       []string

	// changed records which flags were given explicitly.
	changed map[string]bool
}

// ReplayKey is the API key placed in COMMAND's environment (and printed by
// --serve) when none is set: the official SDKs refuse to start without one.
const ReplayKey = "traceforge-replay"

func newVerifyCmd(f *Factory, runF func(*verifyOptions) error) *cobra.Command {
	if runF == nil {
		runF = verifyRun
	}
	opts := &verifyOptions{IO: f.IO, Factory: f, Upstreams: map[provider.Name]*string{}}
	cmd := &cobra.Command{
		Use:   "verify [flags] [-- COMMAND ARGS...]",
		Short: "Check every snapshot and hash; with a command, replay the snapshots to it offline",
		Long: wrap(`Without a command, verify runs the static checks over the snapshot set: schema,
version, every record, file and manifest hash, manifest against files, ids against
request keys, the determinism policy and the secret scan. Every problem is
reported with its file, JSON pointer, rule and fix.

With -- COMMAND, the static checks run first (a failure means COMMAND is not
started), then COMMAND runs against a loopback replay server that answers every
recorded call from the snapshots: no network, no API key (` + replayKeyEnvs() + ` are set to "traceforge-replay" when unset). A call with no
snapshot gets a 404 in the provider's error shape (never retried by the SDKs)
and the report shows a diff against the closest snapshot.

--serve runs the same replay server in the foreground for applications
started separately (prints the exports to use; stop it with Ctrl-C to get the
report).

--live re-sends every snapshot's request to the real upstream --runs times
(keys from ` + liveKeyEnvs() + ` when the server needs one; upstreams as for
record) and
reports drift (all runs agree but differ from the recording) and
nondeterminism (runs differ among themselves). Streamed recordings are
re-sent non-streamed.

Exit codes: 0 verified, 1 verification failed, 2 usage or configuration error,
3 internal error; with a command that fails while verification passes, the
command's own exit code.`),
		Example: `  traceforge verify
  traceforge verify --format junit --output verify.xml
  traceforge verify --format html --output verify.html -- go test ./...
  traceforge verify -- go test ./...
  traceforge verify --fail-on-unused -- npm test
  traceforge verify --serve --listen 127.0.0.1:8787
  traceforge verify --live --runs 5 --shard 2/4`,
		RunE: func(cmd *cobra.Command, args []string) error {
			command, err := commandAfterDash(cmd, args, "verify")
			if err != nil {
				return err
			}
			opts.Command = command
			opts.changed = map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { opts.changed[f.Name] = true })
			return runF(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "format", "text", "report format: text, json, junit, github, html (one self-contained page; use with --output)")
	fl.StringVar(&opts.Output, "output", "", "write the report to this file instead of standard output")
	fl.StringVar(&opts.Shard, "shard", "", "verify only shard K of N (e.g. 2/4), split by snapshot id (static and --live)")
	fl.BoolVar(&opts.FailOnUnused, "fail-on-unused", false, "fail when a snapshot was never requested during replay")
	fl.BoolVar(&opts.DenyBypass, "deny-bypass", false, "with a command: also set HTTP(S)_PROXY to traceforge and refuse (403), list and fail every call that escapes the base URL")
	fl.BoolVar(&opts.ReplayLatency, "replay-latency", false, "replay: wait each snapshot's recorded latency_ms before answering (a recorded stream: each event at its recorded offset)")
	fl.BoolVar(&opts.ReplayMemo, "replay-memo", true, "replay: remember requests that hit, so a repeated request is answered without being parsed and keyed again (--replay-memo=false parses every request)")
	fl.BoolVar(&opts.Serve, "serve", false, "run the replay server in the foreground until SIGINT/SIGTERM, then report")
	fl.StringVar(&opts.Listen, "listen", "", "address of the --serve server (default "+serve.DefaultListen+")")
	fl.StringSliceVar(&opts.AllowHosts, "allow-host", nil, "extra Host name the replay server accepts (repeatable)")
	fl.BoolVar(&opts.Live, "live", false, "re-send every snapshot's request upstream and report drift and nondeterminism")
	fl.IntVar(&opts.Runs, "runs", 1, "--live: runs per snapshot")
	fl.IntVar(&opts.Concurrency, "concurrency", 4, "--live: requests in flight at most")
	upstreamFlags(fl, opts.Upstreams, "--live: ")
	namedUpstreamFlag(fl, &opts.Named)
	return cmd
}

func validFormat(f string) bool {
	for _, x := range render.Formats {
		if f == x {
			return true
		}
	}
	return false
}

// checkVerifyFlags rejects flag combinations that make no sense (exit 2).
func checkVerifyFlags(o *verifyOptions) (*verify.Shard, error) {
	if !validFormat(o.Format) {
		return nil, usageErr("use one of: "+strings.Join(render.Formats, ", "), "unknown --format %q", o.Format)
	}
	shard, err := verify.ParseShard(o.Shard)
	if err != nil {
		return nil, usageErr("e.g. --shard 1/4 in the first of four CI jobs", "%v", err)
	}
	hasCmd := len(o.Command) > 0
	switch {
	case shard != nil && hasCmd:
		return nil, usageErr("shard static or --live verification only; replay needs the whole set", "--shard cannot be combined with a command")
	case shard != nil && o.Serve:
		return nil, usageErr("shard static or --live verification only; replay needs the whole set", "--shard cannot be combined with --serve")
	case o.Serve && hasCmd:
		return nil, usageErr("use either -- COMMAND (traceforge runs it) or --serve (you start the application)", "--serve cannot be combined with a command")
	case o.Live && (hasCmd || o.Serve):
		return nil, usageErr("run --live as its own step, e.g. a scheduled CI job", "--live cannot be combined with a command or --serve")
	}
	if o.changed["listen"] && !o.Serve {
		return nil, usageErr("--listen names the address of the --serve server; with -- COMMAND a free loopback port is used", "--listen needs --serve")
	}
	if o.changed["allow-host"] && !o.Serve && !hasCmd {
		return nil, usageErr("--allow-host applies to the replay server (-- COMMAND or --serve)", "--allow-host needs a command or --serve")
	}
	for _, name := range []string{"replay-latency", "replay-memo", "fail-on-unused"} {
		if o.changed[name] && !o.Serve && !hasCmd {
			return nil, usageErr("--"+name+" applies to replay: traceforge verify --"+name+" -- COMMAND", "--%s needs a command or --serve", name)
		}
	}
	for _, name := range append([]string{"runs", "concurrency"}, upstreamFlagList()...) {
		if o.changed[name] && !o.Live {
			return nil, usageErr("e.g. traceforge verify --live --runs 5", "--%s needs --live", name)
		}
	}
	if o.changed["deny-bypass"] && !hasCmd {
		return nil, usageErr("run: traceforge verify --deny-bypass -- COMMAND ARGS...", "--deny-bypass needs a command: it sets the proxy variables of COMMAND's environment")
	}
	if o.Runs < 1 {
		return nil, usageErr("e.g. --runs 5", "--runs must be at least 1, not %d", o.Runs)
	}
	if o.Concurrency < 1 {
		return nil, usageErr("e.g. --concurrency 4", "--concurrency must be at least 1, not %d", o.Concurrency)
	}
	return shard, nil
}

func verifyRun(o *verifyOptions) error {
	if o.changed == nil {
		o.changed = map[string]bool{}
	}
	shard, err := checkVerifyFlags(o)
	if err != nil {
		return err
	}
	proj, err := o.Factory.OpenProject()
	if err != nil {
		return err
	}
	var live *liveSetup
	if o.Live {
		// Upstream URLs are checked before any work; keys once the set
		// says which providers are needed.
		if live, err = resolveLive(o); err != nil {
			return err
		}
	}
	staticOnly := len(o.Command) == 0 && !o.Serve && !o.Live
	if err := proj.Require("record snapshots first (traceforge record -- <command>), or point --dir at the folder"); err != nil {
		return projectErr(err)
	}
	if staticOnly {
		defer staticGC(o.IO.Getenv)()
	}
	var served func()
	if !staticOnly && !o.Live {
		served = serveLoadGC(o.IO.Getenv)
		o.entries = replay.NewEntries(proj.Dir)
	}
	rep, set, err := verify.Static(verify.StaticOptions{Dir: proj.Dir, Display: proj.Display, Config: proj.Config, CanMigrate: project.CanMigrate, Shard: shard, Slim: staticOnly, Serve: o.entries})
	if err != nil {
		return withCode(ExitFailed, fmt.Errorf("read %s: %w", proj.Display, err), "check the folder's permissions")
	}
	if served != nil {
		served()
	}
	rep.FailOnUnused = o.FailOnUnused
	o.root = proj.Root
	if shard != nil {
		rep.Shard = o.Shard
	}
	switch {
	case o.Live:
		return verifyLive(o, live, proj.Config, rep, set)
	case o.Serve:
		return verifyServe(o, rep, set)
	case len(o.Command) > 0:
		return verifyCommand(o, rep, set)
	}
	if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
		return err
	}
	if rep.Failed() {
		return silentFail(ExitFailed)
	}
	return nil
}

func (o *verifyOptions) context() (context.Context, context.CancelFunc) {
	if o.IO.Context != nil {
		return o.IO.Context()
	}
	return context.WithCancel(context.Background())
}

// replayGrace is how long replies in flight may take when verify stops.
const replayGrace = 5 * time.Second

// startReplay listens and serves the replay server over the valid set.
// replayOptions are the replay server's options for set.
func (o *verifyOptions) replayOptions(set *check.SetResult, display string) verify.ReplayOptions {
	ro := verify.ReplayOptions{Set: set, Entries: o.entries, Display: display, Latency: o.ReplayLatency, Root: o.root}
	if !o.ReplayMemo {
		ro.MemoGeneration = -1 // no memo: every request parsed and keyed
	}
	return ro
}

func startReplay(o *verifyOptions, set *check.SetResult, display, addr string) (*verify.ReplayServer, *serve.Running, net.Listener, error) {
	ln, warning, err := serve.Listen(addr)
	if err != nil {
		return nil, nil, nil, withCode(ExitUsage, err, "pick another address with --listen, or stop what holds the port")
	}
	if warning != "" {
		fmt.Fprintf(o.IO.ErrOut, "traceforge: warning: %s\n", warning)
	}
	rs := verify.NewReplayServer(o.replayOptions(set, display))
	var guardOpts []serve.GuardOption
	if o.DenyBypass {
		guardOpts = append(guardOpts, serve.DenyBypass(&o.bypasses))
	}
	h := serve.Guard(rs.Handler(), serve.AllowList(o.AllowHosts, addr), verify.Refuse, guardOpts...)
	return rs, serve.Start(ln, h), ln, nil
}

// keyEnv returns KEY=traceforge-replay for each provider whose SDKs need
// a key (Descriptor.ReplayKeyEnv) when none of its key variables is set,
// and then the provider's further replay variables (Descriptor.ReplayEnv:
// Bedrock's dummy AWS credentials and region), each one not already set.
func keyEnv(io *IOStreams) []string {
	var env []string
	for _, d := range registry.Providers() {
		if d.LiveKey(io.Getenv) != "" {
			continue
		}
		if d.ReplayKeyEnv != "" {
			env = append(env, d.ReplayKeyEnv+"="+ReplayKey)
		}
		for _, kv := range d.ReplayEnv {
			if name, _, _ := strings.Cut(kv, "="); io.Getenv(name) == "" {
				env = append(env, kv)
			}
		}
	}
	return env
}

// staticFailed reports the static findings and says COMMAND/--serve was not started.
func staticFailed(o *verifyOptions, rep *result.VerifyReport, what string) error {
	if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "traceforge: error: the static checks failed; %s was not started\n", what)
	fmt.Fprintln(o.IO.ErrOut, "traceforge: hint: fix the snapshot set first (see the report above); replay serves only a set that passes every check")
	return silentFail(ExitFailed)
}

func verifyCommand(o *verifyOptions, rep *result.VerifyReport, set *check.SetResult) error {
	cmdline := strings.Join(o.Command, " ")
	if rep.Failed() {
		return staticFailed(o, rep, cmdline)
	}
	_, names, err := parseNamedUpstreams(o.Named)
	if err != nil {
		return err
	}
	rs, srv, ln, err := startReplay(o, set, rep.Dir, "")
	if err != nil {
		return err
	}
	ctx, cancel := o.context()
	defer cancel()
	env := append(registry.CommandEnv(ln.Addr().String()), keyEnv(o.IO)...)
	env = append(env, registry.NamedEnv(ln.Addr().String(), names)...)
	if o.DenyBypass {
		env = append(env, serve.ProxyEnv(ln.Addr().String())...)
	}
	res, err := runChild(ctx, o.IO, o.Command, env)
	srv.Stop(replayGrace)
	if err != nil {
		return err
	}
	rep.Mode = "replay"
	rep.Command = cmdline
	code := res.Code
	rep.ExitCode = &code
	rep.Replayed = rs.Finish()
	for _, b := range o.bypasses.List() {
		rep.Bypassed = append(rep.Bypassed, result.Bypass{Method: b.Method, Target: b.Target, Count: b.Count, Hint: serve.BypassHint})
	}
	if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
		return err
	}
	fmt.Fprintln(o.IO.ErrOut, res.Line)
	if rep.Failed() {
		return silentFail(ExitFailed)
	}
	if res.Code != 0 {
		return silentFail(res.Code)
	}
	return nil
}

func verifyServe(o *verifyOptions, rep *result.VerifyReport, set *check.SetResult) error {
	if rep.Failed() {
		return staticFailed(o, rep, "the replay server")
	}
	addr := o.Listen
	if addr == "" {
		addr = serve.DefaultListen
	}
	ctx, cancel := o.context()
	defer cancel()
	rs, srv, ln, err := startReplay(o, set, rep.Dir, addr)
	if err != nil {
		return err
	}
	for _, line := range registry.Exports(ln.Addr().String()) {
		fmt.Fprintln(o.IO.Out, line)
	}
	for _, kv := range keyEnv(o.IO) {
		fmt.Fprintln(o.IO.Out, "export "+kv)
	}
	fmt.Fprintf(o.IO.ErrOut, "traceforge: replaying %d snapshot(s) on http://%s; stop with Ctrl-C for the report\n", len(set.ByKey()), ln.Addr())
	<-ctx.Done()
	srv.Stop(replayGrace)
	rep.Mode = "serve"
	rep.Replayed = rs.Finish()
	if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
		return err
	}
	if rep.Failed() {
		return silentFail(ExitFailed)
	}
	return nil
}

// liveSetup is the resolved upstreams and keys of --live.
type liveSetup struct {
	ups   upstreams
	named map[string]string // --upstream NAME=URL
	keys  map[provider.Name]string
}

// shown is d's upstream for people; "none" for a provider without a
// default that was given none (--live then refuses its snapshots, naming
// the flag).
func (s *liveSetup) shown(d *provider.Descriptor) string {
	if u := s.ups[d.Name]; u != nil {
		return serve.RedactURL(u)
	}
	return "none (--" + d.UpstreamFlag() + ")"
}

func resolveLive(o *verifyOptions) (*liveSetup, error) {
	ups, err := resolveUpstreams(o.IO, o.Upstreams)
	if err != nil {
		return nil, err
	}
	named, _, err := parseNamedUpstreams(o.Named)
	if err != nil {
		return nil, err
	}
	s := liveSetup{ups: ups, named: named, keys: map[provider.Name]string{}}
	for _, d := range registry.Providers() {
		s.keys[d.Name] = d.LiveKey(o.IO.Getenv)
	}
	return &s, nil
}

func verifyLive(o *verifyOptions, s *liveSetup, cfg *check.Config, rep *result.VerifyReport, set *check.SetResult) error {
	need := map[string]bool{}
	for _, rel := range set.Rels {
		if p, _, ok := snapshot.ValidRelPath(rel); ok {
			need[p] = true
		}
	}
	for _, d := range registry.Providers() {
		if need[string(d.Name)] && !d.KeyOptional && s.keys[d.Name] == "" {
			names := d.KeyNames()
			return usageErr("export "+names[0]+"=… (the key of "+s.shown(d)+"); --live sends real requests",
				"--live needs %s: the set has %s snapshots", strings.Join(names, " or "), d.Title)
		}
	}
	rep.Mode = "live"
	if rep.Failed() {
		// Never spend upstream calls on a set that fails its checks.
		if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
			return err
		}
		fmt.Fprintln(o.IO.ErrOut, "traceforge: error: the static checks failed; no live run was made")
		return silentFail(ExitFailed)
	}
	var snaps []*check.Snapshot
	byKey := set.ByKey()
	for _, sn := range set.Snapshots {
		// Exchanges (DESIGN §13.4: count tokens, files, polling) are no
		// LLM calls: nothing to re-run live, and re-sending a DELETE or an
		// upload would act on the provider's account.
		if _, _, exchange := provider.SplitExchangeEndpoint(provider.Endpoint(sn.Record.Endpoint)); byKey[sn.Key] == sn && !exchange {
			snaps = append(snaps, sn)
		}
	}
	for _, d := range registry.Providers() {
		if need[string(d.Name)] {
			rep.Upstreams = append(rep.Upstreams, string(d.Name)+": "+s.shown(d))
		}
	}
	rep.LiveRuns = o.Runs
	rep.FailOn = cfg.FailClasses()
	var prices map[string]check.Price
	if cfg != nil {
		prices = cfg.Prices
	}
	totals := ledger.NewTotals(prices)
	ctx, cancel := o.context()
	defer cancel()
	lo := verify.LiveOptions{
		Snapshots: snaps, Display: rep.Dir, Runs: o.Runs, Concurrency: o.Concurrency,
		Upstreams: s.ups.strings(), Named: s.named, Keys: s.keys,
		FailOn: rep.FailOn, Totals: totals,
	}
	var bar *progress
	if o.IO.IsTerminal && len(snaps) > 0 {
		bar = newProgress(o.IO.ErrOut, len(snaps)*o.Runs)
		lo.Progress = bar.set
	}
	rep.Live = verify.Live(ctx, lo)
	if bar != nil {
		bar.finish()
	}
	sum := totals.Summary()
	rep.Totals = &sum
	if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
		return err
	}
	if rep.Failed() {
		return silentFail(ExitFailed)
	}
	return nil
}

// writeReport renders rep to --output (atomically) or standard output.
func writeReport(io *IOStreams, rep *result.VerifyReport, format, output string) error {
	if output == "" {
		return render.Verify(io.Out, rep, format, io.Colour() && format == "text")
	}
	var buf bytes.Buffer
	if err := render.Verify(&buf, rep, format, false); err != nil {
		return err
	}
	if err := writeFileAtomic(output, buf.Bytes()); err != nil {
		return withCode(ExitFailed, fmt.Errorf("write report: %w", err), "check that the folder of --output exists and is writable")
	}
	fmt.Fprintln(io.ErrOut, render.VerifySummary(rep))
	if rep.Totals != nil {
		fmt.Fprintln(io.ErrOut, render.TotalsLine(*rep.Totals))
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	st := &snapshot.Store{Dir: filepath.Dir(path)}
	return st.WriteAtomic(filepath.Base(path), data)
}

// progress is the --live progress bar, drawn on ErrOut when it is a terminal.
type progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("live runs"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *progress) set(done, _ int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Set(done)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Finish()
}
