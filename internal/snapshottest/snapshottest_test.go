package snapshottest_test

import (
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// The generated sets are what many tests start from: they must pass every check.
func TestWriteSetIsValid(t *testing.T) {
	dir := t.TempDir()
	entries, err := snapshottest.WriteSet(dir, snapshottest.Many(6)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() || len(res.Snapshots) != 6 || len(entries) != 6 {
		t.Fatalf("generated set: %d snapshots, findings %v", len(res.Snapshots), res.Findings)
	}
}
