// Package golden is the one golden-file mechanism of traceforge's tests:
// output is compared byte for byte with a file under testdata, and
// `go test -update` rewrites the files instead. Only tests import it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/render"
)

var update = flag.Bool("update", false, "rewrite golden files and generated fixtures")

// Update reports whether the tests run with -update (tests that generate
// other fixtures ask it too).
func Update() bool { return *update }

// Assert compares got with the golden file at path. With -update it writes
// got there instead (creating the folder). A mismatch fails t with a
// unified diff from the file to got.
func Assert(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from its golden file (run go test -update if the change is intended):\n%s", path, render.UnifiedDiff("want "+path, "got", string(want), got))
	}
}
