package project

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
)

func TestOpenResolvesRelativeToBase(t *testing.T) {
	base := t.TempDir()
	p, err := Open("", Options{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	if p.Dir != filepath.Join(base, DefaultDir) || p.Root != base || p.Display != DefaultDir || p.Store.Dir != p.Dir {
		t.Errorf("got dir %q root %q display %q store %q", p.Dir, p.Root, p.Display, p.Store.Dir)
	}
	if p.Config == nil || p.Config.Path != "" {
		t.Errorf("no config file: want an empty config, got %+v", p.Config)
	}
	p, err = Open("sub/../snaps/", Options{Base: base, Display: ""})
	if err != nil {
		t.Fatal(err)
	}
	if p.Display != "snaps" || p.Dir != filepath.Join(base, "snaps") {
		t.Errorf("display %q dir %q", p.Display, p.Dir)
	}
	if p, _ = Open(filepath.Join(base, "x"), Options{Display: "shown"}); p.Display != "shown" {
		t.Errorf("display option ignored: %q", p.Display)
	}
}

func TestOpenReadsConfigAtRoot(t *testing.T) {
	base := t.TempDir()
	cfg := `{"exceptions":[{"model":"o3*","relax":["seed"]}]}`
	if err := os.WriteFile(filepath.Join(base, check.ConfigName), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Open(filepath.Join(base, DefaultDir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Config.Exceptions) != 1 || p.CheckOptions().Config != p.Config || p.CheckOptions().CanMigrate == nil {
		t.Errorf("config not loaded into the check options: %+v", p.CheckOptions())
	}
}

func TestOpenBadConfigIsAnErrorWithHint(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, check.ConfigName), []byte(`{"nope":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open("", Options{Base: base})
	var pe *Error
	if !errors.As(err, &pe) || !errors.Is(err, check.ErrConfig) || !strings.Contains(pe.Hint(), check.ConfigName) {
		t.Fatalf("got %v, want an *Error wrapping check.ErrConfig with a hint naming the file", err)
	}
}

func TestRequire(t *testing.T) {
	base := t.TempDir()
	p, err := Open("", Options{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Require("record first")
	var pe *Error
	if !errors.Is(err, ErrNoFolder) || !errors.As(err, &pe) || pe.Hint() != "record first" || err.Error() != "snapshot folder .ai-snapshots does not exist" {
		t.Fatalf("missing folder: %v", err)
	}
	if err := os.Mkdir(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Require("x"); err != nil {
		t.Errorf("existing folder: %v", err)
	}
}

func TestCanMigrate(t *testing.T) {
	if !CanMigrate("0.9.0") || CanMigrate("7.0.0") {
		t.Error("CanMigrate should know 0.9.0 and not 7.0.0")
	}
}

// TestOpenRefusesAFile: a dir that names a file or a symlink is an *Error
// wrapping ErrNotDir, saying which (not "does not exist").
func TestOpenRefusesAFile(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"f": "f is a file", "link": "link is a symlink (never followed)"} {
		_, err := Open(dir, Options{Base: base})
		var pe *Error
		if !errors.Is(err, ErrNotDir) || !errors.As(err, &pe) || !strings.Contains(err.Error(), want) || pe.Hint() == "" {
			t.Errorf("%s: %v", dir, err)
		}
	}
}
