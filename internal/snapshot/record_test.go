package snapshot_test

import (
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// FileRecord is the inverse of FileDocument; a file without exactly one
// record object is refused.
func TestFileRecord(t *testing.T) {
	rec := map[string]any{"id": "abc", "hash": "sha256:00"}
	doc, err := snapshot.FileDocument(rec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := snapshot.MarshalFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := snapshot.FileRecord(data)
	if err != nil || got["id"] != "abc" || got["hash"] != "sha256:00" {
		t.Fatalf("FileRecord = %v, %v; want the record back", got, err)
	}
	for _, bad := range []string{`{"snapshots":[]}`, `{"snapshots":[1]}`, `{"snapshots":[{},{}]}`, `[]`, `{`} {
		if _, err := snapshot.FileRecord([]byte(bad)); err == nil {
			t.Errorf("FileRecord(%s): no error", bad)
		}
	}
}
