package render

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Migrate writes the plan (dry run) or the report of a migration, redacted.
func Migrate(w io.Writer, r *result.MigratePlan) {
	rw := NewRedactor(w)
	defer rw.Flush()
	w = rw
	if r.NothingToDo {
		fmt.Fprintf(w, "Nothing to do: %s.\n", r.Reason)
		return
	}
	mode := ""
	if r.DryRun {
		mode = " (dry run: nothing is written)"
	}
	fmt.Fprintf(w, "Migration of %s from %s to %s%s\n", r.Display, r.From, r.To, mode)
	for _, s := range r.Steps {
		fmt.Fprintf(w, "\nStep %s → %s: %s\n", s.From, s.To, s.Summary)
		width := 0
		for _, it := range s.Items {
			if n := len([]rune(it.Source)); n > width {
				width = n
			}
		}
		for _, it := range s.Items {
			line := "  " + it.Source + strings.Repeat(" ", width-len([]rune(it.Source)))
			if it.Target != "" {
				line += "  → " + it.Target
			}
			if it.Note != "" {
				line += "  (" + it.Note + ")"
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(w, "\nProblems (%d): the migration is refused and nothing is written.\n", len(r.Problems))
		writeProblems(w, r.Display, r.Problems)
		return
	}
	verb := map[bool][3]string{true: {"write", "keep", "remove"}, false: {"wrote", "kept", "removed"}}[r.DryRun]
	fmt.Fprintf(w, "\nFiles:\n")
	for _, rel := range r.Write {
		suffix := ""
		if rel == snapshot.ManifestName {
			suffix = "  (the commit point)"
		}
		fmt.Fprintf(w, "  %-7s %s%s\n", verb[0], path.Join(r.Display, rel), suffix)
	}
	for _, rel := range r.Unchanged {
		fmt.Fprintf(w, "  %-7s %s  (already in place)\n", verb[1], path.Join(r.Display, rel))
	}
	for _, rel := range r.Remove {
		fmt.Fprintf(w, "  %-7s %s\n", verb[2], path.Join(r.Display, rel))
	}
	if r.DryRun {
		fmt.Fprintf(w, "\nProblems: none. Run again without --dry-run to migrate.\n")
	}
}

// WriteMigrateProblems lists a refused migration's problems, each with its
// fix, naming files under dir, redacted.
func WriteMigrateProblems(w io.Writer, dir string, ps finding.Findings) error {
	rw := NewRedactor(w)
	writeProblems(rw, dir, ps)
	return rw.Flush()
}

func writeProblems(w io.Writer, dir string, ps finding.Findings) {
	for _, p := range ps {
		loc := joinDir(dir, p.File)
		if p.Pointer != "" {
			loc += " " + p.Pointer
		}
		if p.Subject != "" {
			loc += " (" + p.Subject + ")"
		}
		fmt.Fprintf(w, "  %s: %s [%s]\n", loc, p.Message, p.Rule)
		if p.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", p.Fix)
		}
	}
}
