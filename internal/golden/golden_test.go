package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder captures what Assert reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = true }

func TestAssert(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(p, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Assert(r, p, "a\nb\n")
	if len(r.errors) != 0 || r.fatal {
		t.Errorf("equal output reported: %v", r.errors)
	}
	Assert(r, p, "a\nc\n")
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "differs from its golden file") {
		t.Errorf("different output not reported: %v", r.errors)
	}
	Assert(r, filepath.Join(dir, "missing.txt"), "x")
	if !r.fatal {
		t.Error("a missing golden file must fail")
	}

	*update = true
	t.Cleanup(func() { *update = false })
	q := filepath.Join(dir, "new", "file.txt")
	Assert(r, q, "fresh\n")
	if b, err := os.ReadFile(q); err != nil || string(b) != "fresh\n" || !Update() {
		t.Errorf("-update did not write the file: %q %v", b, err)
	}
}
