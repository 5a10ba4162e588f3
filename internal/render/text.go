package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/finding"
)

func (r report) writeText(w io.Writer, colour bool) error {
	st := style{colour}
	byFile := map[string]finding.Findings{}
	var files []string
	for _, f := range r.Findings {
		if _, ok := byFile[f.File]; !ok {
			files = append(files, f.File)
		}
		byFile[f.File] = append(byFile[f.File], f)
	}
	for _, file := range files {
		fs := byFile[file]
		mark := st.red("✗")
		if fs.Errors() == 0 {
			mark = st.yellow("•")
		}
		fmt.Fprintf(w, "%s %s\n", mark, st.bold(file))
		for _, f := range fs {
			if f.Verbatim != "" {
				fmt.Fprintln(w, indentLines(f.Verbatim, "  "))
				continue
			}
			ptr := ""
			if f.Pointer != "" {
				ptr = f.Pointer + ": "
			}
			sev := ""
			if f.Severity == finding.Note {
				sev = "note: "
			}
			fmt.Fprintf(w, "  %s%s%s %s\n", sev, ptr, f.Message, st.dim("["+f.Rule+"]"))
			if f.Fix != "" {
				fmt.Fprintf(w, "  %s %s\n", st.dim("fix:"), f.Fix)
			}
		}
		fmt.Fprintln(w)
	}
	for _, m := range r.Misses {
		fmt.Fprintf(w, "%s %s\n", st.red("✗"), st.bold(missTitle(m)))
		if m.Key == "" {
			fmt.Fprintf(w, "  %s\n", m.Reason)
			if m.Count > 1 {
				fmt.Fprintf(w, "  requested %d times\n", m.Count)
			}
			fmt.Fprintf(w, "  %s the replay server answers only the recorded calls of the routes in docs/format.md\n\n", st.dim("fix:"))
			continue
		}
		fmt.Fprintf(w, "  key %s\n", m.Key)
		if m.Source != "" {
			fmt.Fprintf(w, "  from %s\n", m.Source)
		}
		if m.Count > 1 {
			fmt.Fprintf(w, "  requested %d times\n", m.Count)
		}
		if len(m.Near) > 0 {
			fmt.Fprintf(w, "  closest snapshots:\n%s\n", indentLines(nearText(m, st), "  "))
			fmt.Fprintf(w, "  diff against %s:\n", m.Closest)
			fmt.Fprintln(w, indentLines(colourDiff(st, m.Diff), "  "))
		} else if m.Closest != "" {
			fmt.Fprintf(w, "  closest snapshot: %s\n", m.Closest)
			fmt.Fprintln(w, indentLines(colourDiff(st, m.Diff), "  "))
		} else {
			fmt.Fprintln(w, "  no snapshot of this provider to compare with")
		}
		fmt.Fprintf(w, "  %s if the change is intended, record it: traceforge record --only-missing -- <your command>, and commit the snapshot folder\n\n", st.dim("fix:"))
	}
	for _, l := range r.Live {
		if !l.Failed && len(l.Notes) == 0 && !l.ByPolicy && len(l.Errors) == 0 {
			continue
		}
		mark := st.red("✗")
		if !l.Failed {
			mark = st.yellow("•")
		}
		fmt.Fprintf(w, "%s %s\n", mark, st.bold(l.File))
		if l.Message != "" {
			fmt.Fprintln(w, indentLines(l.Message, "  "))
		}
		if cl := classLine(l); cl != "" {
			fmt.Fprintf(w, "  %s\n", cl)
		}
		for _, c := range l.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
		for _, e := range l.Errors {
			fmt.Fprintf(w, "  upstream error: %s\n", e)
		}
		if l.Diff != "" {
			fmt.Fprintln(w, indentLines(colourDiff(st, l.Diff), "  "))
		}
		for _, n := range l.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		fmt.Fprintln(w)
	}
	if len(r.Unused) > 0 {
		label := "note"
		if r.FailOnUnused {
			label = st.red("error")
		}
		fmt.Fprintf(w, "%s: %d snapshot(s) were never requested:\n", label, len(r.Unused))
		for _, u := range r.Unused {
			fmt.Fprintf(w, "  %s\n", u)
		}
		fmt.Fprintln(w)
	}
	for _, e := range r.ReplayErrors {
		fmt.Fprintf(w, "%s replay error: %s\n", st.red("✗"), e)
	}
	for _, b := range r.Bypassed {
		fmt.Fprintf(w, "%s %s\n  the application bypassed the base URL; nothing was sent\n  %s %s\n\n", st.red("✗"), st.bold(bypassLine(b)), st.dim("fix:"), b.Hint)
	}
	if len(r.Synthesized) > 0 {
		fmt.Fprintf(w, "note: %d snapshot(s) have no stored body; their replies were synthesized from the normalized fields:\n", len(r.Synthesized))
		for _, s := range r.Synthesized {
			fmt.Fprintf(w, "  %s (synthesized)\n", s)
		}
		fmt.Fprintln(w)
	}
	if len(r.Normalized) > 0 {
		fmt.Fprintf(w, "note: %d request(s) matched via key normalizers (%s):\n", r.NormalizedCount(), "normalize in .traceforge.json")
		for _, m := range r.Normalized {
			fmt.Fprintf(w, "  %s matched via %s (%d request(s))\n", m.Snapshot, strings.Join(m.Rules, ", "), m.Count)
		}
		fmt.Fprintln(w)
	}
	for _, e := range r.Exception {
		fmt.Fprintf(w, "policy: %s\n", e)
	}
	if r.Mode == "live" {
		fmt.Fprintf(w, "live: %d run(s) per snapshot against %s%s\n", r.LiveRuns, strings.Join(r.Upstreams, ", "), r.failOnText())
	}
	fmt.Fprintln(w, r.summary(st))
	if r.Totals != nil {
		fmt.Fprintln(w, TotalsLine(*r.Totals))
	}
	return nil
}
