package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// hostileSet is a valid set of two calls plus whatever the test adds.
func hostileSet(t *testing.T) (dir string, rels []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), ".ai-snapshots")
	es, err := snapshottest.WriteSet(dir, snapshottest.OpenAIChat("Hostile one"), snapshottest.AnthropicMessage("Hostile two"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		rels = append(rels, e.File)
	}
	return dir, rels
}

func checkDir(t *testing.T, dir string) *SetResult {
	t.Helper()
	res, err := CheckSet(&snapshot.Store{Dir: dir}, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// findingFor returns the error findings naming file (relative to the folder).
func findingFor(res *SetResult, file string) []finding.Finding {
	var out []finding.Finding
	for _, f := range res.Findings {
		if f.Severity == finding.Error && f.File == file {
			out = append(out, f)
		}
	}
	return out
}

// Odd names inside the set folder: each is an unexpected file named exactly,
// never read as a snapshot and never a panic (DESIGN §10).
func TestCheckSetHostileFileNames(t *testing.T) {
	dir, _ := hostileSet(t)
	valid, _ := os.ReadFile(filepath.Join(dir, func() string { _, rels := hostileSet(t); return rels[0] }()))
	names := []string{
		"openai/CON.json",
		"openai/con.json",
		"openai/NUL",
		"openai/0123456789AB.json", // upper-case hex
		"openai/０１２３４５６７８９ab.json",                     // fullwidth digits
		"openai/0123456789ab.json.bak",                 // suffix
		"openai/0123456789ab .json",                    // space
		"openai/C:\\0123456789ab.json",                 // a Windows path is one odd name here
		"openai/" + strings.Repeat("a", 250) + ".json", // over-long
		"ｏpenai/0123456789ab.json",                     // fullwidth o
		"оpenai/0123456789ab.json",                     // Cyrillic о
		"OpenAI/0123456789ab.json",                     // case variant of a provider
		"google/0123456789ab.json",                     // unknown provider
		"0123456789ab.json",                            // top level
		"openai/sub/0123456789ab.json",                 // nested folder
	}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, valid, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Hidden dot-files (temp files, the lock) are never read nor reported,
	// whatever they hold: a backslash "traversal" name is one of them.
	hidden := filepath.Join(dir, "openai", "..\\0123456789ab.json")
	if err := os.WriteFile(hidden, valid, 0o644); err != nil {
		t.Fatal(err)
	}
	res := checkDir(t, dir)
	if len(res.Snapshots) != 2 {
		t.Errorf("%d snapshots read, want only the 2 valid ones", len(res.Snapshots))
	}
	want := map[string]bool{}
	for _, n := range names {
		top, rest, nested := strings.Cut(n, "/")
		switch {
		case !nested:
			want[n] = true
		case snapshot.ValidProvider(top) && strings.Contains(rest, "/"):
			sub, _, _ := strings.Cut(rest, "/")
			want[top+"/"+sub] = true // the folder is the unexpected entry
		case snapshot.ValidProvider(top):
			want[n] = true
		default:
			want[top] = true
		}
	}
	for n := range want {
		fs := findingFor(res, n)
		if len(fs) != 1 || fs[0].Rule != RuleUnexpectedFile {
			t.Errorf("%q: findings %v, want one %s", n, fs, RuleUnexpectedFile)
		}
	}
}

// Symlinks to a file and to a folder outside the set are refused and the
// outside content is never read, even when it is a valid snapshot.
func TestCheckSetSymlinksOutside(t *testing.T) {
	dir, rels := hostileSet(t)
	outside := filepath.Join(t.TempDir(), "outside")
	if _, err := snapshottest.WriteSet(outside, snapshottest.OpenAIChat("Outside")); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadDir(filepath.Join(outside, "openai"))
	outsideFile := filepath.Join(outside, "openai", out[0].Name())
	// A file link named like a snapshot, the anthropic folder as a link,
	// and the manifest as a link.
	if err := os.Symlink(outsideFile, filepath.Join(dir, "openai", out[0].Name())); err != nil {
		t.Fatal(err)
	}
	anth := filepath.Join(dir, "anthropic")
	if err := os.RemoveAll(anth); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "openai"), anth); err != nil {
		t.Fatal(err)
	}
	res := checkDir(t, dir)
	for _, s := range res.Snapshots {
		if s.Rel != rels[0] {
			t.Errorf("read %s through a symlink", s.Rel)
		}
	}
	if fs := findingFor(res, "openai/"+out[0].Name()); len(fs) == 0 || fs[0].Rule != RuleUnsafeFile {
		t.Errorf("file symlink: %v", fs)
	}
	if fs := findingFor(res, "anthropic"); len(fs) != 1 || fs[0].Rule != RuleUnexpectedFile {
		t.Errorf("folder symlink: %v", fs)
	}
	m := filepath.Join(dir, snapshot.ManifestName)
	_ = os.Rename(m, filepath.Join(outside, "manifest.json"))
	_ = os.Symlink(filepath.Join(outside, "manifest.json"), m)
	res = checkDir(t, dir)
	if fs := findingFor(res, "manifest.json"); len(fs) == 0 || fs[0].Rule != RuleUnsafeFile || res.Manifest != nil {
		t.Errorf("manifest symlink: %v (manifest read: %v)", fs, res.Manifest != nil)
	}
	// The set folder itself as a link is refused before anything is read.
	link := filepath.Join(t.TempDir(), ".ai-snapshots")
	_ = os.Symlink(dir, link)
	if _, err := CheckSet(&snapshot.Store{Dir: link}, Options{}, nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlinked set folder: %v", err)
	}
}

// allocDuring returns the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A 2 GiB sparse snapshot file and a 300 MiB sparse manifest are refused by
// their size, without being read (bounded memory).
func TestCheckSetHugeSparseFiles(t *testing.T) {
	dir, rels := hostileSet(t)
	big := filepath.Join(dir, filepath.FromSlash(rels[0]))
	if err := os.Truncate(big, 2<<30); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, snapshot.ManifestName), 300<<20); err != nil {
		t.Fatal(err)
	}
	var res *SetResult
	alloc := allocDuring(func() { res = checkDir(t, dir) })
	if fs := findingFor(res, rels[0]); len(fs) != 1 || !strings.Contains(fs[0].Message, "64 MiB") {
		t.Errorf("2 GiB file: %v", fs)
	}
	if fs := findingFor(res, "manifest.json"); len(fs) != 1 || fs[0].Rule != RuleUnsafeFile {
		t.Errorf("300 MiB manifest: %v", fs)
	}
	if alloc > 16<<20 {
		t.Errorf("checking the sparse files allocated %d MiB", alloc>>20)
	}
}

// Manifest entries whose file or provider is hostile: each is an error on
// manifest.json with the entry's pointer, and no path is built from it.
func TestCheckSetHostileManifestEntries(t *testing.T) {
	bad := []string{"../../etc/passwd", "/etc/passwd", "C:\\Windows\\win.ini", "openai/CON.json",
		"openai/0123456789ab.json\x00.txt", "openai/../openai/0123456789ab.json", "ｏpenai/0123456789ab.json",
		"openai/" + strings.Repeat("a", 4096) + ".json", "openai\\0123456789ab.json", "openai/０１２３４５６７８９ab.json"}
	for i, file := range bad {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			dir, _ := hostileSet(t)
			mp := filepath.Join(dir, snapshot.ManifestName)
			data, _ := os.ReadFile(mp)
			v, _ := snapshot.Decode(data)
			doc := v.(map[string]any)
			es := doc["snapshots"].([]any)
			e := es[0].(map[string]any)
			e["file"] = file
			if strings.HasPrefix(file, "ｏ") {
				e["provider"] = "ｏpenai"
			}
			h, _ := snapshot.DocumentHash(doc)
			doc["hash"] = h
			out, err := snapshot.MarshalManifest(doc)
			if err != nil {
				t.Fatal(err)
			}
			_ = os.WriteFile(mp, out, 0o644)
			res := checkDir(t, dir)
			fs := findingFor(res, "manifest.json")
			if len(fs) == 0 {
				t.Fatalf("entry file %q accepted; findings %v", file, res.Findings)
			}
			if !strings.HasPrefix(fs[0].Pointer, "/snapshots/0") {
				t.Errorf("finding %v does not point at the entry", fs[0])
			}
		})
	}
}

// manifestOf builds a manifest document of n entries (files need not
// exist) in the current format version.
func manifestOf(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 160)
	b.WriteString("{\n  \"version\": \"" + snapshot.Version + "\",\n  \"created_at\": \"2026-01-01T00:00:00Z\",\n  \"updated_at\": \"2026-01-01T00:00:00Z\",\n  \"snapshots\": [\n")
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%012x", i)
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `    {"id": "%s", "provider": "openai", "file": "openai/%s.json", "hash": "sha256:%064x"}`, id, id, i)
	}
	b.WriteString("\n  ],\n  \"hash\": \"sha256:" + strings.Repeat("0", 64) + "\"\n}\n")
	return b.Bytes()
}

// A manifest with a huge number of entries (10^4 in go test, 10^6 under
// make stress via TRACEFORGE_MANIFEST_ENTRIES) is checked in bounded time:
// every entry is reported as dangling, nothing panics.
func TestCheckSetHugeManifest(t *testing.T) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("TRACEFORGE_MANIFEST_ENTRIES")); err == nil && v > 0 {
		n = v
	}
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	_ = os.MkdirAll(dir, 0o755)
	data := manifestOf(n)
	if err := os.WriteFile(filepath.Join(dir, snapshot.ManifestName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var res *SetResult
	start := time.Now()
	alloc := allocDuring(func() { res = checkDir(t, dir) })
	took := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("manifest of %d entries (%d MiB): checked in %v, %d MiB allocated in total, %d MiB obtained from the OS, %d findings",
		n, len(data)>>20, took.Round(time.Millisecond), alloc>>20, ms.Sys>>20, len(res.Findings))
	// Every entry is dangling (and the manifest hash is wrong): each one
	// is reported, not only the first (a version refusal would be one).
	if got := res.Findings.Errors(); got < n {
		t.Errorf("%d error findings for %d dangling entries", got, n)
	}
	if limit := time.Duration(n/1000) * 100 * time.Millisecond; took > limit+10*time.Second {
		t.Errorf("took %v for %d entries", took, n)
	}
}
