package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/setdiff"
	"github.com/traceforge/traceforge/internal/snapshot"
)

type diffOptions struct {
	IO      *IOStreams
	Factory *Factory
	Rev     string
	Format  string
	Output  string
	Check   bool
}

func newDiffCmd(f *Factory, runF func(*diffOptions) error) *cobra.Command {
	o := &diffOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "diff [REV] [--format text|markdown|json|html] [--output FILE] [--check]",
		Short: "Show how the snapshots changed since a Git revision, classified",
		Long: `diff compares the snapshot set at REV (default HEAD, read with git) with the
work tree: added, removed and changed snapshots. Every changed answer is
classified, reporting every class that applies:

  tool-calls   a tool call's name or parsed arguments (ids are ignored)
  structure    the answer is a JSON object or array and its value changed
               (also reported as text)
  finish       finish_reason
  text         the answer text, beyond whitespace
  whitespace   only whitespace in the answer text

Model, token and latency changes and source moves are reported too, but they
are never classes. The answer text is diffed word by word.

Formats: text (default), markdown (for a pull-request comment), json, html
(one self-contained page with verdicts, filters and side-by-side diffs).

--check exits 1 when a change has a class listed in "fail_on" of
.traceforge.json (default: every class but whitespace), or when a snapshot
file in the work tree cannot be read. Added and removed snapshots never fail
--check; traceforge verify --fail-on-unused and replay catch those.

Exit codes: 0 compared (and, with --check, nothing failing), 1 --check found
failing changes, 2 usage or configuration error (not a Git work tree, unknown
revision, bad fail_on).`,
		Example: `  traceforge diff
  traceforge diff main --format markdown
  traceforge diff origin/main --format html --output traceforge-report.html
  traceforge diff HEAD~1 --check`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Rev = "HEAD"
			if len(args) == 1 {
				o.Rev = args[0]
			}
			if runF != nil {
				return runF(o)
			}
			return diffRun(o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Format, "format", "text", "report format: "+strings.Join(setdiff.Formats, ", "))
	fl.StringVar(&o.Output, "output", "", "write the report to this file instead of standard output")
	fl.BoolVar(&o.Check, "check", false, "exit 1 when a change has a class listed in fail_on (.traceforge.json)")
	return cmd
}

func diffRun(o *diffOptions) error {
	if !slices.Contains(setdiff.Formats, o.Format) {
		return usageErr("use --format "+strings.Join(setdiff.Formats, ", --format "), "unknown --format %q", o.Format)
	}
	if strings.HasPrefix(o.Rev, "-") {
		return usageErr("name a commit, branch or tag, e.g. HEAD~1 or origin/main", "unknown revision %q", o.Rev)
	}
	proj, err := o.Factory.OpenProject()
	if err != nil {
		return err
	}
	dir, display, root, cfg := proj.Dir, proj.Display, proj.Root, proj.Config
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usageErr("point --dir at the snapshot folder of a project", "project root %s does not exist", root)
	}
	ctx := context.Background()
	if o.IO.Context != nil {
		var cancel context.CancelFunc
		ctx, cancel = o.IO.Context()
		defer cancel()
	}
	opts := check.Options{Config: cfg, CanMigrate: project.CanMigrate}
	old, err := setdiff.Git{Dir: root}.Read(ctx, o.Rev, dir, display, opts)
	switch {
	case errors.Is(err, setdiff.ErrGitNotFound):
		return withCode(ExitUsage, err, "install git; diff reads the snapshots at REV with it")
	case errors.Is(err, setdiff.ErrNotGit):
		return withCode(ExitUsage, err, "run traceforge diff inside the Git work tree that holds the snapshots (or point --dir there)")
	case errors.Is(err, setdiff.ErrUnknownRev):
		return withCode(ExitUsage, err, "name a commit, branch or tag, e.g. HEAD~1 or origin/main (a shallow CI clone needs fetch-depth: 0)")
	case err != nil:
		return withCode(ExitFailed, err, "")
	}
	cur := &setdiff.Set{Label: "work tree", Missing: true}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		if cur, err = setdiff.FromStore(&snapshot.Store{Dir: dir}, display, "work tree", opts); err != nil {
			return withCode(ExitFailed, fmt.Errorf("read %s: %w", display, err), "check the folder's permissions")
		}
	}
	if old.Missing && cur.Missing {
		return withCode(ExitUsage, fmt.Errorf("no snapshot folder %s at %s or in the work tree", display, o.Rev), "record snapshots first (traceforge record), or point --dir at the folder")
	}
	rep := setdiff.Compare(old, cur, display, cfg.FailClasses())
	var buf bytes.Buffer
	if err := rep.Write(&buf, o.Format); err != nil {
		return err
	}
	if o.Output != "" {
		p := o.Output
		if !filepath.IsAbs(p) {
			p = filepath.Join(o.IO.workDir(), p)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			return withCode(ExitUsage, fmt.Errorf("write --output: %w", err), "check that the folder exists and is writable")
		}
		fmt.Fprintf(o.IO.ErrOut, "traceforge: wrote %s\n", o.Output)
	} else if _, err := o.IO.Out.Write(buf.Bytes()); err != nil {
		return err
	}
	if !o.Check {
		return nil
	}
	failing := rep.Failing()
	if len(failing) == 0 {
		return nil
	}
	var changed, unreadable []string
	var classes []change.Class
	for _, it := range failing {
		if it.Status == setdiff.Unreadable {
			unreadable = append(unreadable, it.File)
			continue
		}
		changed = append(changed, it.File)
		for _, c := range it.Failing {
			if !slices.Contains(classes, c) {
				classes = append(classes, c)
			}
		}
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, fmt.Sprintf("%d snapshot(s) changed since %s in fail_on classes (%s): %s", len(changed), o.Rev, change.Names(classes), strings.Join(changed, ", ")))
	}
	if len(unreadable) > 0 {
		parts = append(parts, fmt.Sprintf("%d snapshot file(s) cannot be read: %s", len(unreadable), strings.Join(unreadable, ", ")))
	}
	hint := "review the report; commit the snapshots if the changes are intended, or list fewer classes in \"fail_on\" of " + check.ConfigName
	if len(changed) == 0 {
		hint = "run traceforge verify for the details"
	}
	return withCode(ExitFailed, errors.New(strings.Join(parts, "; ")), hint)
}
