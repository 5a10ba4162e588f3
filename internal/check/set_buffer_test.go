package check_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestCheckSetReusesReadBuffersSafely: CheckSet's workers read file after
// file into one buffer each; every kept snapshot must still hold what its
// own file says (nothing may alias the buffer the next file overwrites).
func TestCheckSetReusesReadBuffersSafely(t *testing.T) {
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.Many(60)...); err != nil {
		t.Fatal(err)
	}
	res, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil || !res.Valid() {
		t.Fatalf("%v %v", err, res.Findings)
	}
	if len(res.Snapshots) != 60 {
		t.Fatalf("%d snapshots, want 60", len(res.Snapshots))
	}
	for _, s := range res.Snapshots {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Rel)))
		if err != nil {
			t.Fatal(err)
		}
		alone, fs := check.CheckBytes(s.Rel, data, check.Options{})
		if alone == nil || fs.Errors() > 0 {
			t.Fatalf("%s: %v", s.Rel, fs)
		}
		if s.Key != alone.Key || s.FileHash != alone.FileHash || s.ID != alone.ID ||
			snapshot.CanonicalText(s.Record.Request) != snapshot.CanonicalText(alone.Record.Request) ||
			snapshot.CanonicalText(s.Record.Response.Body) != snapshot.CanonicalText(alone.Record.Response.Body) {
			t.Errorf("%s: the set's snapshot differs from the file checked alone", s.Rel)
		}
	}
}
