package result

import (
	"time"

	"github.com/traceforge/traceforge/internal/finding"
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
	Exchanges        int // answers of exchange routes (DESIGN §13.4), among Recorded/Changed/Unchanged
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
	Totals *Totals
	// Defaulted counts the calls the project's request defaults completed
	// (DESIGN §13.2) and DefaultsSet how many calls each member was set
	// on, in order of first use.
	Defaulted   int
	DefaultsSet []DefaultCount
}

// DefaultCount is how many calls of a record run one request default (a
// JSON pointer) was set on.
type DefaultCount struct {
	Pointer string
	Calls   int
}

// Failed reports whether the run could not snapshot every call (exit 1).
func (s *RecordSummary) Failed() bool { return len(s.Problems) > 0 || s.ManifestError != nil }
