package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// migrateStreams returns IOStreams with captured output working in dir.
func migrateStreams(dir string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &IOStreams{
		In:      strings.NewReader(""),
		Out:     &out,
		ErrOut:  &errOut,
		Getenv:  func(string) string { return "" },
		Environ: func() []string { return nil },
		Context: func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
		Dir:     dir,
	}, &out, &errOut
}

// legacyProject copies a legacy fixture into <tmp>/.ai-snapshots/snapshots.json
// and returns the project root.
func legacyProject(t *testing.T, fixture string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "legacy", fixture, "snapshots.json"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, ".ai-snapshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshots.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func runMigrateCLI(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := migrateStreams(root)
	old := now
	now = func() time.Time { return time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC) }
	defer func() { now = old }()
	code := Main(args, io)
	return code, out.String(), errOut.String()
}

func TestSnapshotMigrateCLI(t *testing.T) {
	root := legacyProject(t, "mixed-providers")

	// verify meets the old set with the specification's text and the hint.
	code, out, _ := runMigrateCLI(t, root, "verify")
	for _, want := range []string{"❌ Snapshot version 0.9.0 is no longer supported\n", "   Current version: 1.2.0\n",
		"   Re-record all snapshots (or run: traceforge snapshot migrate --from 0.9.0 --to 1.2.0)\n"} {
		if code != ExitFailed || !strings.Contains(out, want) {
			t.Fatalf("verify on 0.9.0: exit %d, want %q in\n%s", code, want, out)
		}
	}

	// A dry run prints the plan and writes nothing.
	code, out, errOut := runMigrateCLI(t, root, "snapshot", "migrate", "--from", "0.9.0", "--to", "1.2.0", "--dry-run")
	golden, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "legacy", "mixed-providers", "dry-run.golden"))
	if code != ExitOK || out != string(golden) || errOut != "" {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	if es, _ := os.ReadDir(filepath.Join(root, ".ai-snapshots")); len(es) != 1 {
		t.Fatalf("dry run wrote files: %v", es)
	}

	code, out, errOut = runMigrateCLI(t, root, "snapshot", "migrate", "--from", "0.9.0", "--to", "1.2.0")
	if code != ExitOK || !strings.Contains(out, "removed .ai-snapshots/snapshots.json") || !strings.Contains(out, "Migrated .ai-snapshots to format 1.2.0") {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runMigrateCLI(t, root, "verify")
	if code != ExitOK {
		t.Fatalf("verify after migrate: exit %d\n%s", code, out)
	}
	code, out, _ = runMigrateCLI(t, root, "snapshot", "migrate", "--from", "0.9.0", "--to", "1.2.0")
	if code != ExitOK || out != "Nothing to do: .ai-snapshots is already at format 1.2.0.\n" {
		t.Fatalf("rerun: exit %d %q", code, out)
	}
}

func TestSnapshotMigrateCLIExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		fixture string // "" = no folder
		args    []string
		code    int
		stdout  string
		stderr  string
	}{
		{"tampered", "tampered", nil, ExitFailed, `/snapshots/1/hash (#1 "ask-1"): record hash mismatch`, "migration refused: 1 problem(s); nothing was written"},
		{"missing function", "missing-function", nil, ExitFailed, "[missing-function]", "migration refused: 2 problem(s)"},
		{"dry run with problems", "tool-call-finish", []string{"--dry-run"}, ExitFailed, "[tool-call]", "migration refused"},
		{"unknown pair", "valid-openai", []string{"--from", "0.8.0"}, ExitUsage, "", "no migration path from 0.8.0 to 1.2.0 (supported: 0.9.0 → 1.0.0, 0.9.0 → 1.1.0, 0.9.0 → 1.2.0, 1.0.0 → 1.1.0, 1.0.0 → 1.2.0, 1.1.0 → 1.2.0)"},
		{"unknown target", "valid-openai", []string{"--to", "2.0.0"}, ExitUsage, "", "no migration path from 0.9.0 to 2.0.0"},
		{"missing flags", "valid-openai", []string{"--from", ""}, ExitUsage, "", "--from and --to are both required"},
		{"missing folder", "", nil, ExitUsage, "", "snapshot folder .ai-snapshots does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.fixture != "" {
				root = legacyProject(t, tt.fixture)
			}
			args := []string{"snapshot", "migrate", "--from", "0.9.0", "--to", "1.2.0"}
			args = append(args, tt.args...)
			code, out, errOut := runMigrateCLI(t, root, args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if tt.fixture != "" {
				if es, _ := os.ReadDir(filepath.Join(root, ".ai-snapshots")); len(es) > 2 { // snapshots.json (+ .lock)
					t.Errorf("files written: %v", es)
				}
			}
		})
	}
}

func TestSnapshotMigrateCLILocked(t *testing.T) {
	root := legacyProject(t, "valid-openai")
	unlock, err := (&snapshot.Store{Dir: filepath.Join(root, ".ai-snapshots")}).Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, _, errOut := runMigrateCLI(t, root, "snapshot", "migrate", "--from", "0.9.0", "--to", "1.2.0")
	if code != ExitUsage || !strings.Contains(errOut, "is locked") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

func TestSnapshotMigrateCLIDir(t *testing.T) {
	root := legacyProject(t, "valid-anthropic")
	if err := os.Rename(filepath.Join(root, ".ai-snapshots"), filepath.Join(root, "snaps")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMigrateCLI(t, root, "--dir", "snaps", "snapshot", "migrate", "--from", "0.9.0", "--to", "1.2.0")
	if code != ExitOK || !strings.Contains(out, "wrote   snaps/manifest.json") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runMigrateCLI(t, root, "--dir", "snaps", "verify"); code != ExitOK {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
}

// project100 copies the format 1.0.0 fixture set into <tmp>/.ai-snapshots
// and returns the project root.
func project100(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "v1.0.0", "mixed", ".ai-snapshots")
	root := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, ".ai-snapshots", rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestFormat100Set: verify on a 1.0.0 set prints the §8 text naming
// --from 1.0.0 --to 1.2.0 (exit 1); record refuses to add to it with the
// same text (exit 1, the command never started); one migrate command
// upgrades it and verify then passes.
func TestFormat100Set(t *testing.T) {
	root := project100(t)
	text := "❌ Snapshot version 1.0.0 is no longer supported\n   Current version: 1.2.0\n   Re-record all snapshots (or run: traceforge snapshot migrate --from 1.0.0 --to 1.2.0)\n"
	code, out, _ := runMigrateCLI(t, root, "verify")
	for _, line := range strings.SplitAfter(text, "\n")[:3] {
		if code != ExitFailed || !strings.Contains(out, line) {
			t.Fatalf("verify on 1.0.0: exit %d, want %q in\n%s", code, line, out)
		}
	}
	marker := filepath.Join(root, "started")
	code, out, errOut := runMigrateCLI(t, root, "record", "--", "sh", "-c", "touch "+marker)
	if code != ExitFailed || strings.Count(errOut, text) != 1 || !strings.Contains(errOut, "record never adds to a set of another version") {
		t.Fatalf("record on 1.0.0: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("record started the command on a set of another version")
	}
	code, out, errOut = runMigrateCLI(t, root, "snapshot", "migrate", "--from", "1.0.0", "--to", "1.2.0")
	if code != ExitOK || !strings.Contains(out, "Migrated .ai-snapshots to format 1.2.0") {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runMigrateCLI(t, root, "verify"); code != ExitOK {
		t.Errorf("verify after migrate: exit %d\n%s", code, out)
	}
}
