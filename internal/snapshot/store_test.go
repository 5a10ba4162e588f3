package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteAtomicLeavesNoTempAndReplaces(t *testing.T) {
	dir := t.TempDir()
	st := &Store{Dir: dir}
	if err := st.WriteAtomic("openai/0123456789ab.json", []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteAtomic("openai/0123456789ab.json", []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	got, err := st.ReadRel("openai/0123456789ab.json", 100)
	if err != nil || string(got) != "two\n" {
		t.Fatalf("read %q %v", got, err)
	}
	es, _ := os.ReadDir(filepath.Join(dir, "openai"))
	if len(es) != 1 {
		t.Errorf("want only the target file, got %v", es)
	}
}

func TestWriteAtomicReadOnlyFolderKeepsOriginal(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores directory permissions; use an unwritable path instead.
		st := &Store{Dir: "/proc/traceforge-nope"}
		err := st.WriteAtomic("openai/0123456789ab.json", []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "/proc/traceforge-nope") {
			t.Fatalf("want an error naming the path, got %v", err)
		}
		return
	}
	dir := t.TempDir()
	st := &Store{Dir: dir}
	if err := st.WriteAtomic("openai/0123456789ab.json", []byte("orig")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "openai"), 0o555)
	defer os.Chmod(filepath.Join(dir, "openai"), 0o755)
	err := st.WriteAtomic("openai/0123456789ab.json", []byte("new"))
	if err == nil || !strings.Contains(err.Error(), "0123456789ab.json") {
		t.Fatalf("want error naming the file, got %v", err)
	}
	got, _ := st.ReadRel("openai/0123456789ab.json", 100)
	if string(got) != "orig" {
		t.Errorf("original changed: %q", got)
	}
}

func TestReadRelRefusesSymlinksAndLargeFiles(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(outside, []byte("{}"), 0o644)
	os.MkdirAll(filepath.Join(dir, "openai"), 0o755)
	os.Symlink(outside, filepath.Join(dir, "openai", "0123456789ab.json"))
	st := &Store{Dir: dir}
	if _, err := st.ReadRel("openai/0123456789ab.json", 100); !errors.Is(err, ErrSymlink) {
		t.Errorf("symlinked file: %v, want ErrSymlink", err)
	}
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "anthropic"))
	if _, err := st.ReadRel("anthropic/secret.json", 100); !errors.Is(err, ErrSymlink) {
		t.Errorf("symlinked folder: %v, want ErrSymlink", err)
	}
	big := filepath.Join(dir, "openai", "aaaaaaaaaaaa.json")
	f, _ := os.Create(big)
	f.Truncate(2 << 30) // sparse 2 GiB
	f.Close()
	if _, err := st.ReadRel("openai/aaaaaaaaaaaa.json", MaxSnapshotFileSize); !errors.Is(err, ErrTooLarge) {
		t.Errorf("2 GiB sparse file: %v, want ErrTooLarge", err)
	}
	// A FIFO or a folder named like a snapshot is refused without blocking.
	if err := syscall.Mkfifo(filepath.Join(dir, "openai", "bbbbbbbbbbbb.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "openai", "cccccccccccc.json"), 0o755)
	for _, rel := range []string{"openai/bbbbbbbbbbbb.json", "openai/cccccccccccc.json"} {
		if _, err := st.ReadRel(rel, 100); !errors.Is(err, ErrNotFile) {
			t.Errorf("%s: %v, want ErrNotFile", rel, err)
		}
	}
	if _, err := st.ReadRel("openai/dddddddddddd.json", 100); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"../x.json", "/etc/passwd", "openai\\..\\x", "a\x00b"} {
		if _, err := st.ReadRel(bad, 100); !errors.Is(err, ErrBadPath) {
			t.Errorf("ReadRel(%q) = %v, want ErrBadPath", bad, err)
		}
	}
}

func TestValidRelPath(t *testing.T) {
	good := []string{"openai/0123456789ab.json", "anthropic/ffffffffffff.json"}
	bad := []string{"../openai/0123456789ab.json", "openai/0123456789AB.json", "google/0123456789ab.json",
		"openai/0123456789ab.json.bak", "openai/../../etc/passwd", "/openai/0123456789ab.json", "openai/CON.json",
		"openai/０１２３456789ab.json", "openai/0123456789ab", "openai\\0123456789ab.json", "OpenAI/0123456789ab.json"}
	for _, g := range good {
		if _, _, ok := ValidRelPath(g); !ok {
			t.Errorf("%q should be valid", g)
		}
	}
	for _, b := range bad {
		if _, _, ok := ValidRelPath(b); ok {
			t.Errorf("%q should be refused", b)
		}
	}
}

func FuzzValidRelPath(f *testing.F) {
	f.Add("openai/0123456789ab.json")
	f.Add("../x")
	f.Fuzz(func(t *testing.T, rel string) {
		p, id, ok := ValidRelPath(rel)
		if !ok {
			return
		}
		if RelPath(p, id) != rel || strings.Contains(rel, "..") || !ValidID(id) {
			t.Fatalf("accepted %q", rel)
		}
	})
}

func TestLockIsExclusive(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	unlock, err := st.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Lock(); !errors.Is(err, ErrLocked) {
		t.Errorf("second lock: %v, want ErrLocked", err)
	}
	start := time.Now()
	if _, err := st.LockWait(100 * time.Millisecond); !errors.Is(err, ErrLocked) || time.Since(start) < 90*time.Millisecond {
		t.Errorf("LockWait should wait then fail: %v", err)
	}
	unlock()
	u2, err := st.Lock()
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	u2()
}

func TestManifestUnchangedBytes(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	es := []ManifestEntry{{ID: "0123456789ab", Provider: "openai", File: "openai/0123456789ab.json", Hash: "sha256:" + strings.Repeat("a", 64)}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if changed, err := st.WriteManifest(es, nil, t0); err != nil || !changed {
		t.Fatal(changed, err)
	}
	first, _ := st.ReadRel(ManifestName, MaxManifestSize)
	v, _ := Decode(first)
	old := ManifestFromValue(v.(map[string]any))
	changed, err := st.WriteManifest(es, old, t0.Add(time.Hour))
	if err != nil || changed {
		t.Fatalf("unchanged set rewrote the manifest: %v %v", changed, err)
	}
	es = append(es, ManifestEntry{ID: "0123456789ac", Provider: "openai", File: "openai/0123456789ac.json", Hash: es[0].Hash})
	if changed, _ := st.WriteManifest(es, old, t0.Add(time.Hour)); !changed {
		t.Fatal("new entry must rewrite")
	}
	second, _ := st.ReadRel(ManifestName, MaxManifestSize)
	v2, _ := Decode(second)
	m2 := ManifestFromValue(v2.(map[string]any))
	if m2.CreatedAt != old.CreatedAt || m2.UpdatedAt == old.UpdatedAt {
		t.Errorf("created_at must be kept and updated_at changed: %+v", m2)
	}
}

// A write makes its provider folder when missing, refuses a folder that is
// a symlink (existing or not) and names a file in the folder's way, with
// or without a temp-file pool.
func TestWriteFolderChecks(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		dir := t.TempDir()
		st := &Store{Dir: dir}
		if pooled {
			st.Temps = NewTempPool(2)
		}
		if err := st.WriteAtomic("openai/0123456789ab.json", []byte("x\n")); err != nil {
			t.Fatalf("first write (makes the folder): %v", err)
		}
		outside := t.TempDir()
		os.Symlink(outside, filepath.Join(dir, "anthropic"))
		if err := st.WriteAtomic("anthropic/0123456789ab.json", []byte("x\n")); !errors.Is(err, ErrSymlink) {
			t.Errorf("pooled=%v: write into a symlinked folder: %v, want ErrSymlink", pooled, err)
		}
		os.Symlink(filepath.Join(outside, "missing"), filepath.Join(dir, "gemini"))
		if err := st.WriteAtomic("gemini/0123456789ab.json", []byte("x\n")); err == nil {
			t.Errorf("pooled=%v: write through a dangling symlinked folder succeeded", pooled)
		}
		if es, _ := os.ReadDir(outside); len(es) != 0 {
			t.Errorf("pooled=%v: written outside the set: %v", pooled, es)
		}
		// A folder where the file goes: refused by rename(2), the folder and
		// its contents untouched, no temp file left.
		inWay := filepath.Join(dir, "openai", "0123456789cd.json")
		os.MkdirAll(filepath.Join(inWay, "kept"), 0o755)
		if err := st.WriteAtomic("openai/0123456789cd.json", []byte("x\n")); err == nil || !strings.Contains(err.Error(), "0123456789cd.json") {
			t.Errorf("pooled=%v: write over a folder: %v", pooled, err)
		}
		if fi, err := os.Stat(filepath.Join(inWay, "kept")); err != nil || !fi.IsDir() {
			t.Errorf("pooled=%v: the folder in the way was changed: %v", pooled, err)
		}
		if es, _ := os.ReadDir(filepath.Join(dir, "openai")); len(es) != 2 && !pooled {
			t.Errorf("pooled=%v: left behind: %v", pooled, es)
		}
		os.WriteFile(filepath.Join(dir, "ollama"), []byte("in the way"), 0o644)
		if err := st.WriteAtomic("ollama/0123456789ab.json", []byte("x\n")); err == nil || !strings.Contains(err.Error(), "create folder "+filepath.Join(dir, "ollama")) {
			t.Errorf("pooled=%v: write under a file: %v", pooled, err)
		}
		if st.Temps != nil {
			st.Temps.Close()
		}
	}
}
