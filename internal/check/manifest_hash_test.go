package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestManifestHashIsDocumentHash: the streamed manifest hash is the
// document hash, on a manifest large enough to be hashed in several pieces;
// a changed entry changes it.
func TestManifestHashIsDocumentHash(t *testing.T) {
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.Many(800)...); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 150<<10 { // several 64 KiB pieces of canonical text
		t.Fatalf("manifest is only %d bytes", len(data))
	}
	v, err := snapshot.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(map[string]any)
	got, err := manifestHash(doc)
	want, err2 := snapshot.DocumentHash(doc)
	if err != nil || err2 != nil || got != want || got != doc["hash"] {
		t.Fatalf("manifestHash = %s (%v), DocumentHash = %s (%v), stored %v", got, err, want, err2, doc["hash"])
	}
	doc["snapshots"].([]any)[400].(map[string]any)["id"] = "000000000000"
	if changed, _ := manifestHash(doc); changed == got {
		t.Fatal("a changed entry kept the hash")
	}
}
