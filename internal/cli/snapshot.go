package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	stdio "io"
	"path"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/project"
	pv "github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/verify"
)

// now is the clock; replaced in tests.
var now = time.Now

func newSnapshotCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "List, show, tree, stats, reindex, migrate and merge snapshot sets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageErr("run 'traceforge snapshot --help' for the verbs", "missing verb: list, show, tree, stats, reindex, migrate or merge-manifest")
		},
	}
	cmd.AddCommand(newSnapshotListCmd(f, nil))
	cmd.AddCommand(newSnapshotShowCmd(f, nil))
	cmd.AddCommand(newSnapshotReindexCmd(f, nil))
	cmd.AddCommand(newSnapshotMigrateCmd(f, nil))
	cmd.AddCommand(newSnapshotMergeManifestCmd(f, nil))
	cmd.AddCommand(newSnapshotTreeCmd(f, nil))
	cmd.AddCommand(newSnapshotStatsCmd(f, nil))
	return cmd
}

type listOptions struct {
	IO      *IOStreams
	Factory *Factory
	Format  string
}

func newSnapshotListCmd(f *Factory, runF func(*listOptions) error) *cobra.Command {
	if runF == nil {
		runF = listRun
	}
	o := &listOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the snapshots: id, provider, model, source, tokens, latency",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runF(o) },
	}
	cmd.Flags().StringVar(&o.Format, "format", "text", "text or json")
	return cmd
}

// loadSet runs the static checks (list and show display what they find).
func loadSet(f *Factory) (*check.SetResult, string, error) {
	proj, err := f.OpenProject()
	if err != nil {
		return nil, "", err
	}
	if err := proj.Require("record snapshots first, or point --dir at the folder"); err != nil {
		return nil, "", projectErr(err)
	}
	_, set, err := verify.Static(verify.StaticOptions{Dir: proj.Dir, Display: proj.Display, Config: proj.Config, CanMigrate: project.CanMigrate})
	if err != nil {
		return nil, "", withCode(ExitFailed, err, "")
	}
	return set, proj.Display, nil
}

type listRow struct {
	ID        string `json:"id"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	Source    string `json:"source"`
	Tokens    int64  `json:"tokens_used"`
	LatencyMS int64  `json:"latency_ms"`
	File      string `json:"file"`
	Valid     bool   `json:"valid"`
	// Exchange is an exchange record's endpoint ("GET /v1/files/f1") and
	// Status its answer's HTTP status (DESIGN §13.4); an exchange has no
	// model and no tokens.
	Exchange   string `json:"exchange,omitempty"`
	Status     int    `json:"status,omitempty"`
	Occurrence int    `json:"occurrence,omitempty"`
}

func listRun(o *listOptions) error {
	if o.Format != "text" && o.Format != "json" {
		return usageErr("use --format text or --format json", "unknown --format %q", o.Format)
	}
	set, display, err := loadSet(o.Factory)
	if err != nil {
		return err
	}
	rows := make([]listRow, 0, len(set.Snapshots))
	for _, s := range set.Snapshots {
		model, _ := s.Record.Request["model"].(string)
		row := listRow{ID: s.Record.ID, Provider: s.Provider, Model: model, Source: s.Record.Source.Display(),
			Tokens: s.Record.Response.TokensUsed, LatencyMS: s.Record.Response.LatencyMS, File: path.Join(display, s.Rel), Valid: s.Errors == 0,
			Occurrence: s.Record.Occurrence}
		if _, _, ok := pv.SplitExchangeEndpoint(pv.Endpoint(s.Record.Endpoint)); ok {
			row.Exchange, row.Status = s.Record.Endpoint, s.Record.Response.Status
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].File < rows[j].File })
	if o.Format == "json" {
		rw := render.NewRedactor(o.IO.Out)
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return rw.Flush()
	}
	// Redacted before the columns are aligned.
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	rw := render.NewRedactor(tw)
	fmt.Fprintln(rw, "ID\tPROVIDER\tMODEL\tSOURCE\tTOKENS\tLATENCY")
	for _, r := range rows {
		mark := ""
		if !r.Valid {
			mark = "  (invalid: run traceforge verify)"
		}
		what, tokens := r.Model, strconv.FormatInt(r.Tokens, 10)
		if r.Exchange != "" {
			// An exchange: its route and status where a call has its model,
			// and no tokens.
			what, tokens = fmt.Sprintf("%s → %d", r.Exchange, r.Status), "-"
		}
		if r.Occurrence > 0 {
			what += fmt.Sprintf(" (#%d)", r.Occurrence+1)
		}
		fmt.Fprintf(rw, "%s\t%s\t%s\t%s\t%s\t%dms%s\n", r.ID, r.Provider, what, r.Source, tokens, r.LatencyMS, mark)
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := set.Files - len(set.Snapshots); n > 0 {
		fmt.Fprintf(o.IO.ErrOut, "traceforge: %d file(s) could not be read as snapshots; run traceforge verify\n", n)
	}
	return nil
}

type showOptions struct {
	IO      *IOStreams
	Factory *Factory
	ID      string
}

func newSnapshotShowCmd(f *Factory, runF func(*showOptions) error) *cobra.Command {
	if runF == nil {
		runF = showRun
	}
	o := &showOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one snapshot with its hash status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return runF(o)
		},
	}
}

func showRun(o *showOptions) error {
	id := strings.TrimSuffix(path.Base(o.ID), ".json")
	if !snapshot.ValidID(id) {
		return usageErr("ids are 12 lowercase hex characters; see traceforge snapshot list", "%q is not a snapshot id", o.ID)
	}
	set, display, err := loadSet(o.Factory)
	if err != nil {
		return err
	}
	var found *check.Snapshot
	for _, s := range set.Snapshots {
		if s.Record.ID == id || strings.HasSuffix(s.Rel, "/"+id+".json") {
			found = s
			break
		}
	}
	if found == nil {
		return withCode(ExitFailed, fmt.Errorf("no snapshot with id %s in %s", id, display), "see traceforge snapshot list")
	}
	file := path.Join(display, found.Rel)
	var problems finding.Findings
	for _, f := range set.Findings {
		if f.File == found.Rel {
			problems = append(problems, f)
		}
	}
	out := render.NewRedactor(o.IO.Out)
	defer out.Flush()
	r := found.Record
	fmt.Fprintf(out, "id:         %s\n", r.ID)
	fmt.Fprintf(out, "file:       %s\n", file)
	fmt.Fprintf(out, "provider:   %s\n", found.Provider)
	fmt.Fprintf(out, "endpoint:   %s\n", r.Endpoint)
	fmt.Fprintf(out, "recorded:   %s\n", r.Timestamp)
	fmt.Fprintf(out, "source:     %s\n", r.Source.Display())
	fmt.Fprintf(out, "key:        %s\n", found.Key)
	if r.ParentID != "" {
		fmt.Fprintf(out, "lineage:    parent %s, turn %d\n", r.ParentID, r.Turn)
	}
	status := "ok (record, file and manifest hashes verified)"
	if problems.Errors() > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(out, "hash:       %s\n", r.Hash)
	fmt.Fprintf(out, "status:     %s\n", status)
	for _, p := range problems {
		fmt.Fprintf(out, "  %s %s: %s\n", p.Severity, p.Pointer, p.Message)
	}
	if r.Occurrence > 0 {
		fmt.Fprintf(out, "occurrence: %d (identical requests of the run are answered in turn)\n", r.Occurrence+1)
	}
	if _, _, ok := pv.SplitExchangeEndpoint(pv.Endpoint(r.Endpoint)); ok {
		// An exchange (DESIGN §13.4): no tokens, no text, the answer as sent.
		fmt.Fprintf(out, "exchange:   status %d\nlatency:    %dms\n", r.Response.Status, r.Response.LatencyMS)
		req, _ := snapshot.MarshalPretty(r.Request)
		fmt.Fprintf(out, "\nrequest:\n%s", indentBlock(string(req)))
		resp := map[string]any{}
		if raw, ok := r.Raw["response"].(map[string]any); ok {
			for k, v := range raw {
				if k != "status" && k != "latency_ms" {
					resp[k] = v
				}
			}
		}
		body, _ := snapshot.MarshalPretty(resp)
		fmt.Fprintf(out, "\nresponse:\n%s", indentBlock(string(body)))
		if problems.Errors() > 0 {
			return silentFail(ExitFailed)
		}
		return nil
	}
	fmt.Fprintf(out, "tokens:     %d\nlatency:    %dms\nfinish:     %s\n", r.Response.TokensUsed, r.Response.LatencyMS, r.Response.FinishReason)
	req, _ := snapshot.MarshalPretty(r.Request)
	fmt.Fprintf(out, "\nrequest:\n%s", indentBlock(string(req)))
	fmt.Fprintf(out, "\nresponse:\n%s\n", indentBlock(r.Response.Content))
	if len(r.Response.ToolCalls) > 0 {
		tc, _ := snapshot.MarshalPretty(r.Response.ToolCalls)
		fmt.Fprintf(out, "\ntool calls:\n%s", indentBlock(string(tc)))
	}
	if problems.Errors() > 0 {
		return silentFail(ExitFailed)
	}
	return nil
}

func indentBlock(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

type reindexOptions struct {
	IO      *IOStreams
	Factory *Factory
	Rekey   bool
}

func newSnapshotReindexCmd(f *Factory, runF func(*reindexOptions) error) *cobra.Command {
	if runF == nil {
		runF = reindexRun
	}
	o := &reindexOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "reindex [--rekey]",
		Short: "Rebuild manifest.json from the snapshot files that pass every check",
		Long: `reindex rebuilds manifest.json from the snapshot files that pass every check.

With --rekey it first recomputes every snapshot's id, key_normalizers, lineage
and hashes under the key normalizers of the current .traceforge.json, in
increasing turn order, and renames the files. Snapshots that now share a key
are merged when their answers are equal (the earliest is kept); when they
differ nothing is written (exit 1).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runF(o) },
	}
	cmd.Flags().BoolVar(&o.Rekey, "rekey", false, "recompute ids under the current key normalizers, rename the files and rewrite the manifest")
	return cmd
}

func reindexRun(o *reindexOptions) error {
	proj, err := o.Factory.OpenProject()
	if err != nil {
		return err
	}
	if err := proj.Require("point --dir at the snapshot folder"); err != nil {
		return projectErr(err)
	}
	st, display := proj.Store, proj.Display
	unlock, err := st.Lock()
	if err != nil {
		if errors.Is(err, snapshot.ErrLocked) {
			return withCode(ExitUsage, fmt.Errorf("%s is locked by a running traceforge record", display), "wait for it to finish, then rerun")
		}
		return withCode(ExitFailed, err, "")
	}
	defer unlock()
	removed := st.CleanTemp()
	stderr := render.NewLineRedactor(o.IO.ErrOut)
	if o.Rekey {
		return rekeyRun(o, st, display, proj.CheckOptions(), stderr)
	}
	res, err := check.Reindex(st, proj.CheckOptions(), now())
	if errors.Is(err, check.ErrOtherVersion) {
		return withCode(ExitFailed, fmt.Errorf("reindex %s: %w", display, err), "nothing was written; migrate the set first (traceforge snapshot migrate), then reindex")
	}
	if err != nil {
		return withCode(ExitFailed, fmt.Errorf("reindex %s: %w", display, err), "check the folder's permissions")
	}
	for _, r := range removed {
		fmt.Fprintf(stderr, "removed stray temp file %s\n", path.Join(display, r))
	}
	for _, f := range res.Skipped {
		fmt.Fprintf(stderr, "left out %s: %s\n", path.Join(display, f.File), f.Message)
	}
	state := "unchanged"
	if res.Changed {
		state = "rewritten"
	}
	fmt.Fprintf(o.IO.Out, "manifest %s: %d snapshot(s) indexed, %d left out\n", state, len(res.Entries), len(res.Skipped))
	if len(res.Skipped) > 0 {
		return withCode(ExitFailed, fmt.Errorf("%d file(s) failed their checks and were left out of the manifest", len(res.Skipped)), "fix or re-record them, then run traceforge verify")
	}
	return nil
}

// rekeyRun is reindex --rekey: check.Rekey, then what moved.
func rekeyRun(o *reindexOptions, st *snapshot.Store, display string, opts check.Options, stderr stdio.Writer) error {
	res, err := check.Rekey(st, opts, now())
	if errors.Is(err, check.ErrRekeyRefused) {
		for _, f := range res.Refused {
			fmt.Fprintf(stderr, "%s: %s\n", path.Join(display, f.File), f.Message)
			if f.Fix != "" {
				fmt.Fprintf(stderr, "   fix: %s\n", f.Fix)
			}
		}
		return withCode(ExitFailed, err, "nothing was written; fix the problems above, then rerun traceforge snapshot reindex --rekey")
	}
	if err != nil {
		return withCode(ExitFailed, fmt.Errorf("rekey %s: %w", display, err), "check the folder's permissions, then rerun (an interrupted rekey is finished by a rerun)")
	}
	for _, m := range res.Moves {
		switch {
		case m.Dropped:
			fmt.Fprintf(o.IO.Out, "merged %s into %s (same answer)\n", path.Join(display, m.From), path.Join(display, m.To))
		case m.From == m.To:
			fmt.Fprintf(o.IO.Out, "rewrote %s\n", path.Join(display, m.From))
		default:
			fmt.Fprintf(o.IO.Out, "renamed %s → %s\n", path.Join(display, m.From), path.Join(display, m.To))
		}
	}
	state := "unchanged"
	if res.Reindex.Changed {
		state = "rewritten"
	}
	fmt.Fprintf(o.IO.Out, "rekeyed %d snapshot(s); manifest %s: %d snapshot(s) indexed\n", len(res.Moves), state, len(res.Reindex.Entries))
	if len(res.Reindex.Skipped) > 0 {
		for _, f := range res.Reindex.Skipped {
			fmt.Fprintf(stderr, "left out %s: %s\n", path.Join(display, f.File), f.Message)
		}
		return withCode(ExitFailed, fmt.Errorf("%d file(s) failed their checks after rekeying", len(res.Reindex.Skipped)), "run traceforge verify for the details")
	}
	return nil
}
