package cli

import (
	"fmt"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/ledger"
	pv "github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

type treeOptions struct {
	IO      *IOStreams
	Factory *Factory
	ID      string
	Format  string
}

func newSnapshotTreeCmd(f *Factory, runF func(*treeOptions) error) *cobra.Command {
	o := &treeOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "tree [ID] [--format text|json]",
		Short: "Draw the recorded conversations and agent loops from lineage",
		Long: `tree draws the conversations of the snapshot set from each record's lineage:
roots (calls without lineage), children by lineage.parent_id with their turn
numbers, tool iterations (an answer that called tools, and the next turn that
returns their results), forks (one parent, several children) and parents
missing from the set. Each call shows its source, model, finish reason,
tokens and the start of its answer.

A chain of single children continues on the same indent, like a timeline; a
fork opens one branch per child. Order: timestamp, then id.

With ID, tree shows the path from its root to ID, then ID's subtree.
tree reads only the fields it needs and checks no hash: run traceforge
verify for that.`,
		Example: "  traceforge snapshot tree\n  traceforge snapshot tree 3f6ba4d5e7c1 --format json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.ID = args[0]
			}
			if runF != nil {
				return runF(o)
			}
			return treeRun(o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "text", "text or json")
	return cmd
}

func treeRun(o *treeOptions) error {
	if o.Format != "text" && o.Format != "json" {
		return usageErr("use --format text or --format json", "unknown --format %q", o.Format)
	}
	id := strings.TrimSuffix(path.Base(o.ID), ".json")
	if o.ID != "" && !snapshot.ValidID(id) {
		return usageErr("ids are 12 lowercase hex characters; see traceforge snapshot list", "%q is not a snapshot id", o.ID)
	}
	defer ledgerGC(o.IO.Getenv)()
	var entries []*ledger.Entry // Each hands out a fresh entry per file: keep the pointer
	exchanges := 0
	l, err := readLedger(o.Factory, ledger.ReadOptions{Conversation: true}, func(e *ledger.Entry) {
		if _, _, ok := pv.SplitExchangeEndpoint(pv.Endpoint(e.Endpoint)); ok {
			exchanges++ // an exchange (DESIGN §13.4) is no conversation turn
			return
		}
		entries = append(entries, e)
	})
	if err != nil {
		return err
	}
	if exchanges > 0 {
		fmt.Fprintf(o.IO.ErrOut, "traceforge: %d exchange(s) (count-tokens, files, polling, …) are not conversation turns and are not shown; see traceforge snapshot list\n", exchanges)
	}
	view := &ledger.View{Forest: ledger.BuildForestOf(entries)}
	if o.ID != "" {
		if view.Selected = view.Forest.Lookup(id); view.Selected == nil {
			return withCode(ExitFailed, fmt.Errorf("no snapshot with id %s in %s", id, l.display), "see traceforge snapshot list")
		}
	}
	if o.Format == "json" {
		return l.finish(view.WriteJSON)
	}
	return l.finish(view.WriteText)
}
