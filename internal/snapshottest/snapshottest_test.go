package snapshottest

import (
	"os"
	"testing"
)

func TestWriteSetScratch(t *testing.T) {
	dir := os.Getenv("TF_SCRATCH")
	if dir == "" {
		dir = t.TempDir()
	}
	if _, err := WriteSet(dir, Many(4)...); err != nil {
		t.Fatal(err)
	}
}
