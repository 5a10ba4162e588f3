package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// WriteRenamed puts the complete bytes in place before any flush, hands the
// file to the flusher, and Flusher.Wait returns only once a flush that
// began after the rename has finished.
func TestWriteRenamedInPlaceBeforeFlushAndWaitBlocks(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir}
	release := make(chan struct{})
	var flushed []string
	inject(t, &syncFiles, func(_ *os.File, batch []Renamed) error {
		<-release
		for _, r := range batch {
			flushed = append(flushed, r.Rel)
		}
		return nil
	})
	fl := NewFlusher(func(rel string, err error) { t.Errorf("flush of %s failed: %v", rel, err) })
	const rel = "openai/0123456789ab.json"
	data := []byte("{\"a\": 1}\n")
	if err := s.WriteRenamed(rel, data, fl); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "openai", "0123456789ab.json"))
	if err != nil || string(got) != string(data) {
		t.Fatalf("file not in place before the flush: %q, %v", got, err)
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temp files left: %v", tmp)
	}
	if n := fl.Pending(); n != 1 {
		t.Errorf("Pending = %d, want 1", n)
	}
	waited := make(chan error, 1)
	go func() { waited <- fl.Wait() }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) before the flush finished", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if len(flushed) != 1 || flushed[0] != rel || fl.Pending() != 0 {
		t.Errorf("flushed %v, pending %d; want [%s], 0", flushed, fl.Pending(), rel)
	}
	// The folder syncfs runs on was opened before the file was written.
	if fl.root == nil || fl.root.Name() != filepath.Join(dir, "openai") {
		t.Errorf("watched folder %v, want %s", fl.root, filepath.Join(dir, "openai"))
	}
	if err := fl.Close(); err != nil || fl.root != nil {
		t.Errorf("Close: %v, root %v", err, fl.root)
	}
}

// Files renamed while a flush runs share the next one; Wait covers every
// file handed over before it.
func TestFlusherGroupsRenamesIntoFewFlushes(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir}
	var mu sync.Mutex
	durable := map[string]bool{}
	inject(t, &syncFiles, func(_ *os.File, batch []Renamed) error {
		time.Sleep(2 * time.Millisecond) // a slow disk: renames pile up
		mu.Lock()
		defer mu.Unlock()
		for _, r := range batch {
			if _, err := os.Stat(r.Path); err != nil {
				return err
			}
			durable[r.Rel] = true
		}
		return nil
	})
	fl := NewFlusher(nil)
	const writers = 64
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 150 * time.Microsecond)
			if err := s.WriteRenamed(fmt.Sprintf("openai/%012x.json", i), []byte("{}\n"), fl); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := fl.Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range writers {
		if rel := fmt.Sprintf("openai/%012x.json", i); !durable[rel] {
			t.Errorf("%s: Wait returned before its flush", rel)
		}
	}
	fl.mu.Lock()
	batches := fl.batches
	fl.mu.Unlock()
	if batches >= writers || batches < 2 {
		t.Errorf("%d renames over ~10 ms made %d flushes; want several shared ones", writers, batches)
	}
}

// With a window, files renamed one after another by a lone writer share a
// flush (without one, each has its own); a Wait starts the flush at once
// instead of sitting out the window, and still covers every file.
func TestFlusherWindowGroupsALoneWritersFiles(t *testing.T) {
	for _, tc := range []struct {
		window      time.Duration
		wantBatches int
	}{{0, 5}, {time.Hour, 1}} {
		t.Run(tc.window.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := &Store{Dir: dir}
			var mu sync.Mutex
			durable := map[string]bool{}
			inject(t, &syncFiles, func(_ *os.File, batch []Renamed) error {
				mu.Lock()
				defer mu.Unlock()
				for _, r := range batch {
					durable[r.Rel] = true
				}
				return nil
			})
			fl := NewFlusher(nil)
			fl.SetWindow(tc.window)
			for i := range 5 {
				rel := fmt.Sprintf("openai/%012x.json", i)
				if err := s.WriteRenamed(rel, []byte("{}\n"), fl); err != nil {
					t.Fatal(err)
				}
				if tc.window == 0 { // the lone writer's next call comes after this flush
					deadline := time.Now().Add(10 * time.Second)
					for fl.Pending() > 0 && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
				}
			}
			done := make(chan error, 1)
			go func() { done <- fl.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Wait sat out the flush window")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(durable) != 5 {
				t.Errorf("Wait returned with %d of 5 files flushed", len(durable))
			}
			fl.mu.Lock()
			defer fl.mu.Unlock()
			if fl.batches != tc.wantBatches {
				t.Errorf("window %v: 5 files made %d flushes, want %d", tc.window, fl.batches, tc.wantBatches)
			}
		})
	}
}

// A failed deferred flush is reported for every file of its batch, naming
// the file and keeping the OS error; Wait returns the same errors; later
// flushes are made again.
func TestFlusherReportsFailedFlushNamingEachFile(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir}
	var mu sync.Mutex
	fail := true
	release := make(chan struct{})
	inject(t, &syncFiles, func(_ *os.File, batch []Renamed) error {
		<-release
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return &os.PathError{Op: "syncfs", Path: dir, Err: syscall.EIO}
		}
		return nil
	})
	reported := map[string]error{}
	fl := NewFlusher(func(rel string, err error) {
		mu.Lock()
		reported[rel] = err
		mu.Unlock()
	})
	rels := []string{"openai/000000000001.json", "anthropic/000000000002.json"}
	for _, rel := range rels {
		if err := s.WriteRenamed(rel, []byte("{}\n"), fl); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	err := fl.Wait()
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Wait: %v, want EIO", err)
	}
	for _, rel := range rels {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if !strings.Contains(err.Error(), p) {
			t.Errorf("Wait's error does not name %s: %v", p, err)
		}
		mu.Lock()
		rerr := reported[rel]
		mu.Unlock()
		if !errors.Is(rerr, syscall.EIO) || !strings.Contains(rerr.Error(), p) {
			t.Errorf("%s: reported %v, want EIO naming %s", rel, rerr, p)
		}
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if err := s.WriteRenamed("openai/000000000003.json", []byte("{}\n"), fl); err != nil {
		t.Fatal(err)
	}
	if err := fl.Wait(); !errors.Is(err, syscall.EIO) {
		t.Errorf("the earlier failure is forgotten: %v", err)
	}
	if _, ok := reported["openai/000000000003.json"]; ok {
		t.Error("a flush after the disk recovered was reported as failed")
	}
}

// The real flushes (syncfs on Linux, file and folder fsyncs elsewhere)
// succeed on renamed files in two folders.
func TestSyncRenamedReal(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir}
	var batch []Renamed
	for _, rel := range []string{"openai/000000000001.json", "anthropic/000000000002.json"} {
		if err := s.write(rel, []byte("{}\n"), NewFlusher(nil)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		batch = append(batch, Renamed{Rel: rel, Path: p, Dir: filepath.Dir(p)})
	}
	root, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, r := range []*os.File{root, nil} {
		if err := syncRenamed(r, batch); err != nil {
			t.Errorf("syncRenamed(%v): %v", r, err)
		}
	}
	if err := syncEach(batch); err != nil {
		t.Errorf("syncEach: %v", err)
	}
	batch[0].Path += ".gone"
	if err := syncEach(batch); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("syncEach of a missing file: %v", err)
	}
}
