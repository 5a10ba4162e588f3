// Package setdiff compares two snapshot sets — the set at a Git revision and
// the work tree's — and reports added, removed and changed snapshots, each
// change classified by internal/change (DESIGN §12.5). It backs
// `traceforge diff`.
package setdiff

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/migrate"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Set is one side of a diff.
type Set struct {
	Label     string                     // how the side is named: "HEAD", "work tree"
	Snapshots map[string]*check.Snapshot // readable snapshots by <provider>/<id>.json
	Broken    map[string]string          // files that are not readable snapshots: rel → reason
	Missing   bool                       // the snapshot folder does not exist on this side
}

func newSet(label string) *Set {
	return &Set{Label: label, Snapshots: map[string]*check.Snapshot{}, Broken: map[string]string{}}
}

// FromStore reads the set in a folder (the work tree) with the check pipeline.
func FromStore(st *snapshot.Store, display, label string, opts check.Options) (*Set, error) {
	s := newSet(label)
	res, err := check.CheckSet(st, opts, nil)
	if err != nil {
		return nil, err
	}
	for _, sn := range res.Snapshots {
		s.Snapshots[sn.Rel] = sn
	}
	for _, rel := range res.Rels {
		if _, ok := s.Snapshots[rel]; ok {
			continue
		}
		s.Broken[rel] = firstError(res.Findings, rel)
	}
	return s, nil
}

func firstError(fs finding.Findings, file string) string {
	for _, f := range fs {
		if f.File == file && f.Severity == finding.Error {
			return f.Message
		}
	}
	return "not a readable snapshot"
}

// Errors of the Git side.
var (
	ErrNotGit      = errors.New("not inside a Git work tree")
	ErrUnknownRev  = errors.New("unknown revision")
	ErrGitNotFound = errors.New("git is not installed")
)

// Git reads sets at revisions of the repository holding Dir.
type Git struct {
	Dir string // any folder inside the work tree
}

func (g Git) run(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, ErrGitNotFound
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out, nil
}

// TopLevel returns the root of the work tree.
func (g Git) TopLevel(ctx context.Context) (string, error) {
	out, err := g.run(ctx, g.Dir, nil, "rev-parse", "--show-toplevel")
	if errors.Is(err, ErrGitNotFound) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrNotGit, g.Dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// Read returns the set in folder dir (absolute, inside the work tree) as it
// is at rev. Each file passes the same per-file checks as the work tree's;
// files larger than the snapshot cap and symbolic links are not read.
func (g Git) Read(ctx context.Context, rev, dir, display string, opts check.Options) (*Set, error) {
	top, err := g.TopLevel(ctx)
	if err != nil {
		return nil, err
	}
	commit, err := g.run(ctx, top, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownRev, rev)
	}
	sub, err := relInside(top, dir)
	if err != nil {
		return nil, err
	}
	out, err := g.run(ctx, top, nil, "ls-tree", "-r", "-z", "-l", "--full-tree", strings.TrimSpace(string(commit)), "--", sub+"/")
	if err != nil {
		return nil, err
	}
	s := newSet(rev)
	type blob struct{ rel, oid string }
	var blobs []blob
	for _, line := range strings.Split(string(out), "\x00") {
		if line == "" {
			continue
		}
		meta, p, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", line)
		}
		rel := strings.TrimPrefix(p, sub+"/")
		if _, _, ok := snapshot.ValidRelPath(rel); !ok {
			continue // the manifest, or a file no snapshot set holds
		}
		switch size, _ := strconv.ParseInt(f[3], 10, 64); {
		case f[0] == "120000":
			s.Broken[rel] = "is a symbolic link; it is not followed"
		case f[1] != "blob":
			s.Broken[rel] = "is not a file"
		case size > snapshot.MaxSnapshotFileSize:
			s.Broken[rel] = "is larger than the 64 MiB snapshot limit and was not read"
		default:
			blobs = append(blobs, blob{rel, f[2]})
		}
	}
	if len(blobs) == 0 && len(s.Broken) == 0 {
		s.Missing = true
		return s, nil
	}
	var in bytes.Buffer
	for _, b := range blobs {
		in.WriteString(b.oid + "\n")
	}
	cat, err := g.run(ctx, top, &in, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(cat))
	for _, b := range blobs {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("git cat-file: unexpected header %q", strings.TrimSpace(header))
		}
		size, _ := strconv.Atoi(f[2])
		data := make([]byte, size+1) // content and its trailing LF
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		sn, fs := check.CheckBytes(b.rel, data[:size], opts)
		if sn == nil && previousVersion(data[:size]) {
			// A set from before an upgrade (1.0.0, 1.1.0): compare it as
			// `snapshot migrate` made it (hashes checked, nothing written).
			if up, err := migrate.UpgradeFile(path.Dir(b.rel), data[:size]); err == nil {
				sn, fs = check.CheckBytes(b.rel, up, opts)
			}
		}
		if sn == nil {
			s.Broken[b.rel] = firstError(fs, b.rel)
			continue
		}
		s.Snapshots[b.rel] = sn
	}
	return s, nil
}

// previousVersion reports whether a snapshot file says it is at an
// earlier format version that migrate upgrades file by file (1.0.0, 1.1.0).
func previousVersion(data []byte) bool {
	v, err := snapshot.Decode(data)
	doc, _ := v.(map[string]any)
	version, _ := doc["version"].(string)
	return err == nil && migrate.UpgradableFileVersion(version)
}

// relInside returns dir relative to top, slash-separated; both are resolved
// through symbolic links first.
func relInside(top, dir string) (string, error) {
	t, err := filepath.EvalSymlinks(top)
	if err != nil {
		t = top
	}
	d := dir
	// The folder may not exist in the work tree (removed); resolve its parent.
	if r, err := filepath.EvalSymlinks(filepath.Dir(dir)); err == nil {
		d = filepath.Join(r, filepath.Base(dir))
	}
	rel, err := filepath.Rel(t, d)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s is outside the repository at %s", ErrNotGit, dir, top)
	}
	if rel == "." {
		return "", fmt.Errorf("the snapshot folder %s is the repository root; point --dir at a subfolder", dir)
	}
	return filepath.ToSlash(rel), nil
}
