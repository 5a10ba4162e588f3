// Package project opens a snapshot folder the one way every command and the
// Go transport use: resolve the folder, name it for reports, find the
// project root (the folder's parent) and read the policy config there.
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/migrate"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// DefaultDir is the snapshot folder's name under the project root.
const DefaultDir = snapshot.DefaultDir

// ErrNoFolder means the snapshot folder does not exist (Project.Require).
var ErrNoFolder = errors.New("snapshot folder does not exist")

// ErrNotDir means the snapshot folder's path names something that is not a
// directory: a file, or a symlink (never followed).
var ErrNotDir = errors.New("snapshot folder is not a directory")

// Project is an opened snapshot folder.
type Project struct {
	Dir     string          // the snapshot folder, absolute
	Root    string          // the project root: Dir's parent, where the config lives
	Display string          // how reports name the folder, e.g. ".ai-snapshots"
	Config  *check.Config   // the parsed .traceforge.json (empty when there is none)
	Store   *snapshot.Store // the folder's store
}

// Options say how to resolve the folder.
type Options struct {
	// Base is the directory a relative dir is resolved against ("" = the
	// process's working directory).
	Base string
	// Display names the folder in reports ("" = dir as given, cleaned, with
	// forward slashes).
	Display string
}

// Error is an opening failure with what to do about it. Every Error is a
// usage or configuration error (exit 2 in the CLI).
type Error struct {
	Err  error
	hint string
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause (check.ErrConfig, ErrNoFolder, …).
func (e *Error) Unwrap() error { return e.Err }

// Hint says how to fix it.
func (e *Error) Hint() string { return e.hint }

// Open resolves dir ("" = DefaultDir) and reads the project's policy config.
// A bad config is an *Error wrapping check.ErrConfig; a dir that names a
// file (or a symlink) an *Error wrapping ErrNotDir. The folder need not
// exist (record creates it); Require says whether it does.
func Open(dir string, o Options) (*Project, error) {
	p, err := Locate(dir, o)
	if err != nil {
		return nil, err
	}
	cfg, err := check.LoadConfig(p.Root)
	if err != nil {
		if errors.Is(err, check.ErrConfig) {
			return nil, &Error{Err: err, hint: "fix " + check.ConfigName + " (see docs/format.md, \"Policy config\")"}
		}
		return nil, err
	}
	p.Config = cfg
	return p, nil
}

// Locate resolves the snapshot folder, project root and display name like
// Open, without reading the config (Config is nil): for init, which writes
// the config rather than obeying it.
func Locate(dir string, o Options) (*Project, error) {
	if dir == "" {
		dir = DefaultDir
	}
	display := o.Display
	if display == "" {
		display = filepath.ToSlash(filepath.Clean(dir))
	}
	if !filepath.IsAbs(dir) {
		base := o.Base
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, fmt.Errorf("resolve %s: %w", display, err)
			}
			base = wd
		}
		dir = filepath.Join(base, dir)
	}
	dir = filepath.Clean(dir)
	p := &Project{Dir: dir, Root: filepath.Dir(dir), Display: display, Store: &snapshot.Store{Dir: dir}}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		what := "a file"
		if fi.Mode()&fs.ModeSymlink != 0 {
			what = "a symlink (never followed)"
		}
		return nil, &Error{Err: fmt.Errorf("%w: %s is %s", ErrNotDir, display, what),
			hint: "point --dir at the snapshot folder (a directory), or remove " + display + " so that record can create it"}
	}
	return p, nil
}

// Require returns an *Error wrapping ErrNoFolder when the folder does not
// exist; hint says what to do instead.
func (p *Project) Require(hint string) error {
	fi, err := os.Lstat(p.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Err: noFolder(p.Display), hint: hint}
	}
	if err == nil && !fi.IsDir() {
		return &Error{Err: fmt.Errorf("%w: %s", ErrNotDir, p.Display), hint: "point --dir at the snapshot folder (a directory)"}
	}
	return nil
}

// noFolder is ErrNoFolder naming the folder.
type noFolder string

func (e noFolder) Error() string { return "snapshot folder " + string(e) + " does not exist" }

// Is makes errors.Is(err, ErrNoFolder) true.
func (noFolder) Is(target error) bool { return target == ErrNoFolder }

// CheckOptions are the check pipeline's options for this project: its
// policy config, and the migrate registry for the version hint.
func (p *Project) CheckOptions() check.Options {
	return check.Options{Config: p.Config, CanMigrate: CanMigrate}
}

// CanMigrate reports whether `snapshot migrate` knows a path from version
// to the current format (the hint verify gives on an old set).
func CanMigrate(version string) bool { return migrate.CanMigrate(version, snapshot.Version) }
