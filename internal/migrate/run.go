package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// StageDir is the hidden folder, inside the snapshot folder, where a
// migration writes the new set before renaming it in. verify ignores it.
const StageDir = ".migrate-tmp"

// Errors that mean the migration could not start (exit 2 at the CLI).
var (
	ErrNoFolder        = errors.New("snapshot folder not found")
	ErrNoSet           = errors.New("no snapshot set to migrate")
	ErrVersionMismatch = errors.New("the set is not at the --from version")
	ErrLocked          = snapshot.ErrLocked
	ErrTarget          = errors.New("unsupported target version")
)

// ErrRefused means the set cannot be migrated as it is (exit 1 at the CLI);
// the error is a *RefusedError listing every problem.
var ErrRefused = errors.New("migration refused")

// RefusedError lists every problem that stops a migration.
type RefusedError struct {
	Problems finding.Findings
	// Written is true only when the problems were found after the new
	// files were committed (the final verification); the old file is kept.
	Written bool
}

func (e *RefusedError) Error() string {
	if e.Written {
		return fmt.Sprintf("the migrated set does not verify (%d problem(s)); %s was kept", len(e.Problems), LegacyFile)
	}
	return fmt.Sprintf("migration refused: %d problem(s); nothing was written", len(e.Problems))
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Options configure Run.
type Options struct {
	Dir      string // the snapshot folder
	Display  string // how it is named in messages ("" = Dir)
	From, To string
	DryRun   bool
	Check    check.Options
	Now      func() time.Time // nil = time.Now
	Registry *Registry        // nil = the default registry
}

// afterStage, when set (tests only), runs after each stage of the write; an
// error stops the migration right there, as a crash would.
var afterStage func(stage string) error

func hook(stage string) error {
	if afterStage != nil {
		return afterStage(stage)
	}
	return nil
}

// Run migrates the set in o.Dir from o.From to o.To: all or nothing. See the
// package documentation for the order of writes.
func Run(o Options) (*result.MigratePlan, error) {
	reg := o.Registry
	if reg == nil {
		reg = defaultRegistry
	}
	display := o.Display
	if display == "" {
		display = filepath.ToSlash(o.Dir)
	}
	clock := o.Now
	if clock == nil {
		clock = time.Now
	}
	res := &result.MigratePlan{Display: display, From: o.From, To: o.To, DryRun: o.DryRun}
	steps, err := reg.Path(o.From, o.To)
	if err != nil {
		return nil, err
	}
	if o.To != snapshot.Version {
		return nil, fmt.Errorf("%w: this traceforge writes format %s only, not %s", ErrTarget, snapshot.Version, o.To)
	}
	fi, err := os.Lstat(o.Dir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNoFolder, display)
	}
	st := &snapshot.Store{Dir: o.Dir}
	if !o.DryRun {
		unlock, err := st.Lock()
		if err != nil {
			return nil, err
		}
		defer unlock()
	}

	src, onDisk, err := load(st, display, o.From, o.To)
	if err != nil {
		return nil, err
	}
	if src == nil {
		if !o.DryRun {
			// A crash after the last removal may have left the stage folder.
			if err := os.RemoveAll(filepath.Join(o.Dir, StageDir)); err != nil {
				return nil, fmt.Errorf("clear %s: %w", StageDir, err)
			}
		}
		res.NothingToDo = true
		res.Reason = fmt.Sprintf("%s is already at format %s", display, o.To)
		return res, nil
	}

	env := Env{Now: clock().UTC(), Display: display, Check: o.Check}
	set := src
	for _, s := range steps {
		out, rep, err := s.Apply(set, env)
		if err != nil {
			return nil, fmt.Errorf("step %s → %s: %w", s.From, s.To, err)
		}
		if rep == nil {
			rep = &result.MigrateStep{From: s.From, To: s.To}
		}
		res.Steps = append(res.Steps, rep)
		if len(rep.Problems) > 0 {
			res.Problems = append(res.Problems, rep.Problems...)
			return res, &RefusedError{Problems: res.Problems}
		}
		if out == nil || out.Version != s.To {
			return nil, fmt.Errorf("step %s → %s produced no %s set", s.From, s.To, s.To)
		}
		set = out
	}

	// Compare the new set with what the folder holds besides the old set.
	keepManifest := false
	for _, rel := range set.Rels() {
		cur, exists := onDisk[rel]
		_, isSource := src.Files[rel]
		switch {
		case !exists || isSource:
			res.Write = append(res.Write, rel)
		case rel == snapshot.ManifestName:
			switch sameOrSubset(cur, set.Files[rel]) {
			case 0:
				keepManifest = true
				res.Unchanged = append(res.Unchanged, rel)
			case 1:
				res.Write = append(res.Write, rel)
			default:
				res.Problems = append(res.Problems, finding.Finding{File: rel, Rule: check.RuleManifestEntry,
					Message: "manifest.json lists snapshots that are not part of this migration; the folder mixes two sets",
					Fix:     "move the 1.0.0 set or the old file out of the folder, then rerun"})
			}
		case bytes.Equal(cur, set.Files[rel]):
			res.Unchanged = append(res.Unchanged, rel)
		default:
			res.Problems = append(res.Problems, finding.Finding{File: rel, Rule: "existing-file",
				Message: "already exists with different content; migration never overwrites a snapshot it did not write",
				Fix:     "move the file out of the folder (or restore the folder from Git), then rerun"})
		}
	}
	for _, rel := range sortedRels(onDisk) {
		if _, isSource := src.Files[rel]; isSource {
			continue
		}
		if _, planned := set.Files[rel]; !planned || onDisk[rel] == nil {
			res.Problems = append(res.Problems, finding.Finding{File: rel, Rule: check.RuleUnexpectedFile,
				Message: "is not part of this migration; the folder mixes two sets",
				Fix:     "move the file out of the folder, then rerun"})
		}
	}
	for _, rel := range src.Rels() {
		if _, kept := set.Files[rel]; !kept {
			res.Remove = append(res.Remove, rel)
		}
	}
	// The manifest goes last: it is the commit point.
	sort.SliceStable(res.Write, func(i, j int) bool { return res.Write[j] == snapshot.ManifestName })
	if len(res.Problems) > 0 {
		return res, &RefusedError{Problems: res.Problems}
	}
	if o.DryRun {
		return res, nil
	}
	if err := commit(st, set, res, keepManifest, o.Check); err != nil {
		return res, err
	}
	res.Done = true
	return res, nil
}

// load reads the set at version from. It returns a nil set when the folder
// is already at version to, and the current-layout files (manifest and
// snapshot files) found next to the old set.
func load(st *snapshot.Store, display, from, to string) (*Set, map[string][]byte, error) {
	entries, err := st.Scan()
	if err != nil {
		return nil, nil, err
	}
	onDisk := map[string][]byte{}
	var legacy, manifest bool
	for _, e := range entries {
		if e.Symlink {
			return nil, nil, &RefusedError{Problems: finding.Findings{{File: e.Rel, Rule: check.RuleUnsafeFile,
				Message: "is a symbolic link; migration never follows links", Fix: "replace it with the real file, then rerun"}}}
		}
		switch e.Kind {
		case snapshot.EntryLegacy:
			legacy = true
		case snapshot.EntryUnexpected:
			onDisk[e.Rel] = nil // reported as not part of the migration
		case snapshot.EntryManifest:
			manifest = true
			fallthrough
		case snapshot.EntrySnapshot:
			limit := int64(snapshot.MaxSnapshotFileSize)
			if e.Kind == snapshot.EntryManifest {
				limit = snapshot.MaxManifestSize
			}
			data, err := st.ReadRel(e.Rel, limit)
			if err != nil {
				return nil, nil, err
			}
			onDisk[e.Rel] = data
		}
	}
	version := func(data []byte) string {
		v, err := snapshot.Decode(data)
		if err != nil {
			return ""
		}
		m, _ := v.(map[string]any)
		s, _ := m["version"].(string)
		return s
	}
	switch {
	case legacy:
		data, err := st.ReadRel(snapshot.LegacyName, snapshot.MaxManifestSize)
		if err != nil {
			return nil, nil, err
		}
		if v := version(data); v != from {
			return nil, nil, fmt.Errorf("%w: %s is format %s, not %s; run with --from %s", ErrVersionMismatch,
				path.Join(display, snapshot.LegacyName), orUnreadable(v), from, orUnreadable(v))
		}
		return &Set{Version: from, Files: map[string][]byte{snapshot.LegacyName: data}}, onDisk, nil
	case manifest:
		v := version(onDisk[snapshot.ManifestName])
		if v == to {
			return nil, onDisk, nil
		}
		if v != from {
			return nil, nil, fmt.Errorf("%w: %s is format %s, not %s", ErrVersionMismatch, display, orUnreadable(v), from)
		}
		files := make(map[string][]byte, len(onDisk))
		rest := map[string][]byte{}
		for k, d := range onDisk {
			if d == nil {
				rest[k] = nil
			} else {
				files[k] = d
			}
		}
		return &Set{Version: from, Files: files}, rest, nil
	}
	return nil, nil, fmt.Errorf("%w: %s holds neither %s nor %s", ErrNoSet, display, snapshot.LegacyName, snapshot.ManifestName)
}

func orUnreadable(v string) string {
	if v == "" {
		return "unreadable"
	}
	return v
}

func sortedRels(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameOrSubset compares an existing manifest with the planned one: 0 = same
// entries (keep the file as it is), 1 = a subset (an interrupted earlier run
// or a reindex in between: rewrite), -1 = other entries (a mix).
func sameOrSubset(cur, planned []byte) int {
	entries := func(data []byte) []snapshot.ManifestEntry {
		v, err := snapshot.Decode(data)
		if err != nil {
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		return snapshot.ManifestFromValue(m).Entries
	}
	a, b := entries(cur), entries(planned) // an unreadable manifest has no entries: rewritten
	if snapshot.SameEntries(a, b) {
		return 0
	}
	want := map[snapshot.ManifestEntry]bool{}
	for _, e := range b {
		want[e] = true
	}
	for _, e := range a {
		if !want[e] {
			return -1
		}
	}
	return 1
}

// commit writes the new set: stage every file in .migrate-tmp, verify the
// staged set with the check pipeline, rename the files in, the manifest last
// (the commit point), verify the folder, then remove the old files.
func commit(st *snapshot.Store, set *Set, res *result.MigratePlan, keepManifest bool, opts check.Options) error {
	stage := filepath.Join(st.Dir, StageDir)
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("clear %s: %w", StageDir, err)
	}
	if err := os.Mkdir(stage, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", StageDir, err)
	}
	staged := &snapshot.Store{Dir: stage}
	for _, rel := range set.Rels() {
		if err := staged.WriteAtomic(rel, set.Files[rel]); err != nil {
			return err
		}
	}
	checked, err := check.CheckSet(staged, opts, nil)
	if err != nil {
		return err
	}
	if checked.Findings.Errors() > 0 {
		_ = os.RemoveAll(stage)
		return &RefusedError{Problems: errorsOf(checked.Findings)}
	}
	if err := hook("staged"); err != nil {
		return err
	}

	for _, rel := range res.Write {
		if rel == snapshot.ManifestName {
			continue
		}
		if err := renameIn(stage, st.Dir, rel); err != nil {
			return err
		}
		if err := hook("renamed " + rel); err != nil {
			return err
		}
	}
	if !keepManifest {
		if err := renameIn(stage, st.Dir, snapshot.ManifestName); err != nil {
			return err
		}
	}
	if err := hook("committed"); err != nil {
		return err
	}

	// The old files go only once the new set verifies in place.
	final, err := check.CheckSet(st, opts, nil)
	if err != nil {
		return err
	}
	var bad finding.Findings
	for _, f := range final.Findings {
		if f.Severity == finding.Error && f.Rule != check.RuleMigration {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return &RefusedError{Problems: errorsOf(bad), Written: true}
	}
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("clear %s: %w", StageDir, err)
	}
	for _, rel := range res.Remove {
		if err := os.Remove(filepath.Join(st.Dir, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", rel, err)
		}
		if err := snapshot.SyncDir(filepath.Dir(filepath.Join(st.Dir, filepath.FromSlash(rel)))); err != nil {
			return err
		}
		if err := hook("removed " + rel); err != nil {
			return err
		}
	}
	return nil
}

// errorsOf keeps the findings that fail.
func errorsOf(fs finding.Findings) finding.Findings {
	var out finding.Findings
	for _, f := range fs {
		if f.Severity == finding.Error {
			out = append(out, f)
		}
	}
	return out
}

// renameIn moves stage/rel to dir/rel (same file system), creating the
// provider folder when needed and syncing it.
func renameIn(stage, dir, rel string) error {
	target := filepath.Join(dir, filepath.FromSlash(rel))
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(parent); err != nil || fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%s: %w", parent, snapshot.ErrSymlink)
	}
	if err := os.Rename(filepath.Join(stage, filepath.FromSlash(rel)), target); err != nil {
		return fmt.Errorf("move %s into place: %w", rel, err)
	}
	return snapshot.SyncDir(parent)
}
