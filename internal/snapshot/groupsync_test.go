package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Concurrent WriteAtomic calls into one folder share folder fsyncs, and
// each call returns only after an fsync that began after its rename: the
// fake fsync notes which names were in the folder when it began, and every
// call checks, on return, that its file was among the names of a finished
// fsync.
func TestWriteAtomicGroupCommitSharesFolderFsync(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir}
	var mu sync.Mutex
	durable := map[string]bool{}
	syncs := 0
	inject(t, &syncFolder, func(d string) error {
		es, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond) // a slow disk: writers pile up
		mu.Lock()
		defer mu.Unlock()
		syncs++
		for _, e := range es {
			durable[filepath.Join(d, e.Name())] = true
		}
		return nil
	})
	const writers = 64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Arrivals spread over several fsyncs: some writers rename
			// while an fsync is running and must wait for the next one.
			time.Sleep(time.Duration(i) * 150 * time.Microsecond)
			rel := fmt.Sprintf("openai/%012x.json", i)
			if err := s.WriteAtomic(rel, []byte("{}\n")); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			ok := durable[filepath.Join(dir, "openai", fmt.Sprintf("%012x.json", i))]
			mu.Unlock()
			if !ok {
				errs <- fmt.Errorf("%s: WriteAtomic returned before a folder fsync covered its rename", rel)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if syncs >= writers {
		t.Errorf("%d writers made %d folder fsyncs; concurrent writers should share them", writers, syncs)
	}
	if syncs < 2 {
		t.Errorf("%d folder fsyncs for writers arriving over ~10 ms; want several batches", syncs)
	}
}

// A lone writer still fsyncs the folder once per write.
func TestWriteAtomicLoneWriterSyncsFolderEachTime(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	syncs := 0
	inject(t, &syncFolder, func(d string) error { syncs++; return syncDir(d) })
	for i := range 3 {
		if err := s.WriteAtomic(fmt.Sprintf("openai/%012x.json", i), []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	if syncs != 3 {
		t.Errorf("3 sequential writes made %d folder fsyncs, want 3", syncs)
	}
}

// A failing folder fsync is reported to every writer of its batch, and the
// next batch syncs again (the failure is not remembered for later writers).
func TestWriteAtomicGroupCommitReportsFsyncFailureToBatch(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	var mu sync.Mutex
	fail := true
	inject(t, &syncFolder, func(d string) error {
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return &os.PathError{Op: "sync", Path: d, Err: syscall.EIO}
		}
		return nil
	})
	const writers = 16
	var wg sync.WaitGroup
	var failed int
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.WriteAtomic(fmt.Sprintf("openai/%012x.json", i), []byte("{}\n"))
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("writer %d: got %v, want the folder fsync's EIO", i, err)
			}
			mu.Lock()
			failed++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if failed != writers {
		t.Fatalf("%d of %d writers returned", failed, writers)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if err := s.WriteAtomic("openai/0000000000ff.json", []byte("{}\n")); err != nil {
		t.Errorf("after the disk recovered: %v", err)
	}
}
