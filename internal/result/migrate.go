package result

import "github.com/traceforge/traceforge/internal/finding"

// MigrateItem says what a migration step did with one record of its input.
type MigrateItem struct {
	Source string // the input record, e.g. `#0 "sum-1" openai src/a.py:12:f`
	Target string // the file it goes to ("" when refused)
	Note   string // e.g. merged, refused
}

// MigrateStep is what one migration step reports: the fate of each input
// record and every problem found (Subject names the record). A step with
// problems produces no output set.
type MigrateStep struct {
	From, To string
	Summary  string // one line, e.g. "5 legacy records in snapshots.json → 4 snapshot files"
	Items    []MigrateItem
	Notes    []string
	Problems finding.Findings
}

// MigratePlan is the plan of a migration and, unless DryRun, what was done.
type MigratePlan struct {
	Display  string // the snapshot folder's display name
	From, To string
	DryRun   bool
	// NothingToDo is set when the folder is already at the target version.
	NothingToDo bool
	Reason      string
	Steps       []*MigrateStep
	Write       []string // files written, manifest last
	Unchanged   []string // files already in place with the same content (a rerun)
	Remove      []string // old files removed after the commit point
	Problems    finding.Findings
	Done        bool // the migration completed
}
