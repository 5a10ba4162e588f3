package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/result"
)

// Record writes a record run's summary, redacted: the counts line, then
// every problem with its fix, then (when listUnrequested) the snapshots the
// run did not request.
func Record(w io.Writer, s *result.RecordSummary, listUnrequested bool) {
	rw := NewRedactor(w)
	defer rw.Flush()
	rec := fmt.Sprintf("%d recorded", s.Recorded+s.Changed+s.SourceUpdated)
	if s.Changed > 0 || s.SourceUpdated > 0 {
		rec += fmt.Sprintf(" (%d new, %d changed, %d source updated)", s.Recorded, s.Changed, s.SourceUpdated)
	}
	calls := fmt.Sprintf("%d call(s)", s.Calls)
	if s.Exchanges > 0 {
		// Exchanges (count-tokens, files, polling: DESIGN §13.4) are
		// counted apart from LLM calls.
		calls += fmt.Sprintf(" (%d exchange(s) with provider routes around the LLM calls)", s.Exchanges)
	}
	line := fmt.Sprintf("traceforge record: %s: %s, %d unchanged", calls, rec, s.Unchanged)
	if s.Served > 0 {
		line += fmt.Sprintf(", %d served from snapshots", s.Served)
	}
	line += fmt.Sprintf(", %d refused, %d not snapshotted", s.Refused, s.NotSnapshotted)
	if s.Nondeterministic > 0 {
		line += fmt.Sprintf(", %d nondeterministic", s.Nondeterministic)
	}
	fmt.Fprintln(rw, line)
	fmt.Fprintf(rw, "tokens: %d, time: %s\n", s.Tokens, s.Duration.Round(time.Millisecond))
	if s.Defaulted > 0 {
		parts := make([]string, len(s.DefaultsSet))
		for i, d := range s.DefaultsSet {
			parts[i] = fmt.Sprintf("%s ×%d", d.Pointer, d.Calls)
		}
		fmt.Fprintf(rw, "request defaults completed %d call(s): %s\n", s.Defaulted, strings.Join(parts, ", "))
	}
	if s.Retried > 0 {
		fmt.Fprintf(rw, "%d failed call(s) succeeded when retried and are not counted as failures\n", s.Retried)
	}
	writeRecordProblems(rw, s)
	if n := len(s.Unrequested); n > 0 {
		if listUnrequested {
			fmt.Fprintf(rw, "%d snapshot(s) not requested by this run:\n", n)
			for _, u := range s.Unrequested {
				fmt.Fprintf(rw, "   %s\n", u)
			}
		} else {
			fmt.Fprintf(rw, "%d snapshot(s) not requested by this run (record --prune -- COMMAND removes them)\n", n)
		}
	}
	if s.Totals != nil {
		fmt.Fprintln(rw, TotalsLine(*s.Totals))
	}
}

// RecordProblems writes every problem of a record run with its fix, and the
// manifest error, as Record does, redacted.
func RecordProblems(w io.Writer, s *result.RecordSummary) {
	rw := NewRedactor(w)
	writeRecordProblems(rw, s)
	_ = rw.Flush()
}

func writeRecordProblems(w io.Writer, s *result.RecordSummary) {
	for _, p := range s.Problems {
		head := "❌ " + p.Outcome + ": " + p.Subject
		if p.ID != "" {
			head += " (id " + p.ID + ")"
		}
		if p.Count > 1 {
			head += fmt.Sprintf(" ×%d", p.Count)
		}
		fmt.Fprintln(w, head)
		if p.File != "" {
			fmt.Fprintf(w, "   %s\n", joinDir(s.Dir, p.File))
		}
		fmt.Fprintf(w, "   %s\n", p.Message)
		for _, d := range p.Details {
			fmt.Fprintf(w, "     %s\n", d)
		}
		if p.Fix != "" {
			fmt.Fprintf(w, "   → %s\n", p.Fix)
		}
	}
	if s.ManifestError != nil {
		fmt.Fprintf(w, "❌ manifest not written: %v\n", s.ManifestError)
		fmt.Fprintln(w, "   → check the snapshot folder's permissions, then run: traceforge snapshot reindex")
	}
}
