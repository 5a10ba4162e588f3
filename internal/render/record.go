package render

import (
	"fmt"
	"io"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/ledger"
)

// Outcomes of a call that did not end as a stored snapshot
// (finding.Finding.Outcome), as the record summary heads them.
const (
	OutcomeNotSnapshotted = "not snapshotted" // forwarded without a snapshot
	OutcomeRefused        = "refused"         // answered, but its snapshot cannot be stored
	OutcomeNondeterminism = "nondeterminism"  // contradicted an earlier answer in the run
)

// RecordSummary is the outcome of a recording run.
type RecordSummary struct {
	Calls            int // requests that reached the proxy
	Recorded         int // new snapshots written
	Changed          int // snapshots rewritten with a changed answer
	SourceUpdated    int // snapshots rewritten with a new source only
	Unchanged        int // calls whose snapshot was kept byte for byte
	Served           int // --only-missing hits answered from the set
	Refused          int // calls answered but refused a snapshot
	NotSnapshotted   int // calls forwarded without a snapshot
	Nondeterministic int // calls that contradicted an earlier answer
	Retried          int // failed calls whose request later succeeded
	Tokens           int64
	Duration         time.Duration
	// Problems are the calls that did not end as a stored snapshot: Rule
	// is the record problem kind, Subject the call, Outcome its heading.
	Problems finding.Findings
	// Dir is the snapshot folder's display name (Problems' files are
	// relative to it).
	Dir string
	// Unrequested lists the snapshot files (display paths) this run never
	// requested.
	Unrequested []string
	// ManifestError is set when the manifest could not be written.
	ManifestError error
	// Totals are the calls the upstream answered in this run: tokens, cost
	// where priced, latency (the summary's last line); nil = not counted.
	Totals *ledger.Summary
}

// Failed reports whether the run could not snapshot every call (exit 1).
func (s *RecordSummary) Failed() bool { return len(s.Problems) > 0 || s.ManifestError != nil }

// Write prints the summary, redacted: the counts line, then every problem
// with its fix, then (when listUnrequested) the snapshots the run did not
// request.
func (s *RecordSummary) Write(w io.Writer, listUnrequested bool) {
	rw := NewRedactor(w)
	defer rw.Flush()
	rec := fmt.Sprintf("%d recorded", s.Recorded+s.Changed+s.SourceUpdated)
	if s.Changed > 0 || s.SourceUpdated > 0 {
		rec += fmt.Sprintf(" (%d new, %d changed, %d source updated)", s.Recorded, s.Changed, s.SourceUpdated)
	}
	line := fmt.Sprintf("traceforge record: %d call(s): %s, %d unchanged", s.Calls, rec, s.Unchanged)
	if s.Served > 0 {
		line += fmt.Sprintf(", %d served from snapshots", s.Served)
	}
	line += fmt.Sprintf(", %d refused, %d not snapshotted", s.Refused, s.NotSnapshotted)
	if s.Nondeterministic > 0 {
		line += fmt.Sprintf(", %d nondeterministic", s.Nondeterministic)
	}
	fmt.Fprintln(rw, line)
	fmt.Fprintf(rw, "tokens: %d, time: %s\n", s.Tokens, s.Duration.Round(time.Millisecond))
	if s.Retried > 0 {
		fmt.Fprintf(rw, "%d failed call(s) succeeded when retried and are not counted as failures\n", s.Retried)
	}
	s.writeProblems(rw)
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
		fmt.Fprintln(rw, s.Totals.Line())
	}
}

// WriteProblems prints every problem with its fix, and the manifest error,
// as Write does, redacted.
func (s *RecordSummary) WriteProblems(w io.Writer) {
	rw := NewRedactor(w)
	s.writeProblems(rw)
	_ = rw.Flush()
}

func (s *RecordSummary) writeProblems(w io.Writer) {
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
