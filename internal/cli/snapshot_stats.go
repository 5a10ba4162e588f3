package cli

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
)

type statsOptions struct {
	IO      *IOStreams
	Factory *Factory
	By      string
	Format  string
}

func newSnapshotStatsCmd(f *Factory, runF func(*statsOptions) error) *cobra.Command {
	o := &statsOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "stats [--by provider|model|source|endpoint] [--format text|json]",
		Short: "Calls, tokens, latency, streamed share and cost of the recorded calls",
		Long: `stats adds up the snapshot set: calls, input/output/total tokens (from each
call's stored usage; tokens_used where only that exists), latency p50/p95/max
(nearest rank), the share of streamed calls, and the cost where
.traceforge.json has "prices" (USD per 1M tokens per model):

  {"prices": {"gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.6},
              "claude-sonnet-4-5-20250929": {"input": 3, "output": 15,
                                             "cache_read": 0.3, "cache_write": 3.75}}}

Models are the served model (response.model), else the requested one; prices
are looked up by that exact name. Cache reads and writes are not input tokens:
they are listed apart and priced only with cache_read/cache_write prices.
Tokens without a price are listed as unpriced, never guessed.

stats reads only the fields it needs from each file and checks no hash: run
traceforge verify for that.`,
		Example: "  traceforge snapshot stats --by model\n  traceforge snapshot stats --by source --format json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return statsRun(o)
		},
	}
	cmd.Flags().StringVar(&o.By, "by", "model", "group by provider, model, source or endpoint")
	cmd.Flags().StringVar(&o.Format, "format", "text", "text or json")
	return cmd
}

func statsRun(o *statsOptions) error {
	if !ledger.ValidGrouping(o.By) {
		return usageErr("use --by "+strings.Join(ledger.Groupings, ", --by "), "unknown --by %q", o.By)
	}
	if o.Format != "text" && o.Format != "json" {
		return usageErr("use --format text or --format json", "unknown --format %q", o.Format)
	}
	defer ledgerGC(o.IO.Getenv)()
	tally := ledger.NewTally(o.By)
	l, err := readLedger(o.Factory, ledger.ReadOptions{}, tally.Add)
	if err != nil {
		return err
	}
	rep := tally.Report(l.cfg.Prices)
	if o.Format == "json" {
		return l.finish(rep.WriteJSON)
	}
	return l.finish(rep.WriteText)
}

// ledgerSet is a snapshot set read leanly for stats and tree.
type ledgerSet struct {
	io       *IOStreams
	display  string
	cfg      *check.Config
	problems []ledger.Problem
}

// readLedger reads the set in --dir with the lean reader (no schema, no
// hashes), handing each entry to fn.
func readLedger(f *Factory, opts ledger.ReadOptions, fn func(*ledger.Entry)) (*ledgerSet, error) {
	proj, err := f.OpenProject()
	if err != nil {
		return nil, err
	}
	if err := proj.Require("record snapshots first, or point --dir at the folder"); err != nil {
		return nil, projectErr(err)
	}
	io, display, cfg := f.IO, proj.Display, proj.Config
	problems, err := ledger.Each(proj.Store, opts, fn)
	if err != nil {
		return nil, withCode(ExitFailed, fmt.Errorf("read %s: %w", display, err), "check the folder's permissions")
	}
	return &ledgerSet{io: io, display: display, cfg: cfg, problems: problems}, nil
}

// finish streams the output (the ledger redacts every string it read) and
// fails when files were left out: figures that silently skip files would
// be wrong.
func (l *ledgerSet) finish(write func(io.Writer) error) error {
	w := bufio.NewWriterSize(l.io.Out, 64<<10)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, p := range l.problems {
		fmt.Fprintf(l.io.ErrOut, "left out %s: %s\n", path.Join(l.display, p.Rel), check.Redact(p.Err.Error()))
	}
	if n := len(l.problems); n > 0 {
		return withCode(ExitFailed, fmt.Errorf("%d file(s) in %s could not be read and are not counted", n, l.display), "run traceforge verify to see what is wrong with them")
	}
	return nil
}
