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

// poolFiles lists the pool's temp files in dir.
func poolFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".pool.tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitPool waits until the pool holds n files for dir.
func waitPool(t *testing.T, p *TempPool, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		got, filling := len(p.free[dir]), p.filling[dir]
		p.mu.Unlock()
		if got == n && !filling {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool of %s holds %d files, want %d", dir, got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// With a TempPool, a snapshot file is written through a temp file created
// ahead: after the first write the pool holds its files (hidden, skipped by
// Scan, removed by CleanTemp), the next writes take them, and Close removes
// those not taken. The files written are exactly the bytes given, and a
// write after Close still works and leaves no temp file.
func TestTempPoolWritesThroughPreparedFiles(t *testing.T) {
	dir := t.TempDir()
	pool := NewTempPool(3)
	st := &Store{Dir: dir, Temps: pool}
	sub := filepath.Join(dir, "openai")
	if err := st.WriteAtomic("openai/0123456789ab.json", []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	waitPool(t, pool, sub, 3)
	if got := poolFiles(t, sub); len(got) != 3 {
		t.Fatalf("pool files on disk: %v", got)
	}
	before := poolFiles(t, sub)
	fl := NewFlusher(nil)
	if err := st.WriteRenamed("openai/0123456789ac.json", []byte("two\n"), fl); err != nil {
		t.Fatal(err)
	}
	if err := fl.Close(); err != nil {
		t.Fatal(err)
	}
	// The write took one of the prepared files: it is gone from the pool.
	after := map[string]bool{}
	for _, f := range poolFiles(t, sub) {
		after[f] = true
	}
	taken := 0
	for _, f := range before {
		if !after[f] {
			taken++
		}
	}
	if taken != 1 {
		t.Errorf("%d prepared files taken by one write, want 1", taken)
	}
	for rel, want := range map[string]string{"openai/0123456789ab.json": "one\n", "openai/0123456789ac.json": "two\n"} {
		if got, err := st.ReadRel(rel, 100); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
		}
	}
	// The manifest (the set's own folder) never goes through the pool.
	if _, err := st.WriteManifest(nil, nil, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if got := poolFiles(t, dir); len(got) != 0 {
		t.Errorf("pool files in the set's folder: %v", got)
	}
	waitPool(t, pool, sub, 3)
	es, err := st.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.Contains(e.Rel, ".tmp-") {
			t.Errorf("Scan lists the pool file %s", e.Rel)
		}
	}
	pool.Close()
	if got := poolFiles(t, sub); len(got) != 0 {
		t.Errorf("Close left pool files: %v", got)
	}
	if err := st.WriteAtomic("openai/0123456789ad.json", []byte("three\n")); err != nil {
		t.Fatal(err)
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temp files after a write past Close: %v", tmp)
	}
}

// The prepared files of a killed process are temp files like any other:
// CleanTemp removes them.
func TestTempPoolFilesAreCleanedAfterAKill(t *testing.T) {
	dir := t.TempDir()
	pool := NewTempPool(2)
	st := &Store{Dir: dir, Temps: pool}
	if err := st.WriteAtomic("anthropic/0123456789ab.json", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "anthropic")
	waitPool(t, pool, sub, 2)
	// No Close: the process "died". A new run cleans up.
	removed := (&Store{Dir: dir}).CleanTemp()
	if len(removed) != 2 {
		t.Errorf("CleanTemp removed %v, want the 2 pool files", removed)
	}
	if got := poolFiles(t, sub); len(got) != 0 {
		t.Errorf("pool files left: %v", got)
	}
	for _, f := range pool.free[sub] {
		f.f.Close()
	}
}

// A disk fault while a prepared file is filled leaves neither it nor a
// changed target, and the error names the target.
func TestTempPoolDiskFullRemovesPreparedFile(t *testing.T) {
	dir := t.TempDir()
	pool := NewTempPool(2)
	defer pool.Close()
	st := &Store{Dir: dir, Temps: pool}
	const rel = "openai/0123456789ab.json"
	if err := st.WriteAtomic(rel, []byte("orig\n")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "openai")
	waitPool(t, pool, sub, 2)
	inject(t, &writeTemp, func(f *os.File, b []byte) (int, error) {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	})
	err := st.WriteRenamed(rel, []byte("new\n"), NewFlusher(nil))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), filepath.Join(sub, "0123456789ab.json")) {
		t.Fatalf("write on a full disk: %v", err)
	}
	if got, _ := st.ReadRel(rel, 100); string(got) != "orig\n" {
		t.Errorf("target changed to %q", got)
	}
	waitPool(t, pool, sub, 2)
	if got := poolFiles(t, sub); len(got) != 2 {
		t.Errorf("pool files on disk after the failed write: %v (want the 2 the pool holds, the failed one removed)", got)
	}
}

// A folder deleted while the pool held files for it (and made again by the
// next write) does not make writes fail: files that lost their name are
// dropped, not renamed.
func TestTempPoolSurvivesADeletedFolder(t *testing.T) {
	dir := t.TempDir()
	pool := NewTempPool(3)
	defer pool.Close()
	st := &Store{Dir: dir, Temps: pool}
	if err := st.WriteAtomic("openai/0123456789ab.json", []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "openai")
	waitPool(t, pool, sub, 3)
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"0123456789ac", "0123456789ad", "0123456789ae", "0123456789af"} {
		if err := st.WriteAtomic("openai/"+id+".json", []byte("after\n")); err != nil {
			t.Fatalf("write %d after the folder was deleted: %v", i, err)
		}
	}
	if got, err := st.ReadRel("openai/0123456789af.json", 100); err != nil || string(got) != "after\n" {
		t.Errorf("read %q, %v", got, err)
	}
}
