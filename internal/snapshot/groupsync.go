package snapshot

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// Group commit of folder fsyncs. A rename is durable once its folder has
// been fsync'd after it; one fsync covers every rename made into that folder
// before the fsync began. Concurrent writers into one folder therefore share
// fsyncs: a writer whose rename is done joins the batch that is filling; the
// batch's fsync starts only when no fsync of that folder is running (so it
// begins after every member's rename), and every member returns its result.
// A lone writer pays exactly one fsync, as before; under load, one fsync
// serves many writers. WriteAtomic still returns only once its own rename is
// on disk, so "the answer arrived ⇒ its snapshot is on disk" holds.

// folderSyncers holds one *folderSyncer per folder path.
var folderSyncers sync.Map

// syncFolder is the seam for the group-commit tests; the value is the real
// folder fsync.
var syncFolder = syncDir

type folderSyncer struct {
	mu      sync.Mutex
	cond    sync.Cond
	running bool       // an fsync of the folder is in progress
	filling *syncBatch // writers waiting for the next fsync; nil when none
}

type syncBatch struct {
	done bool
	err  error
}

// groupSyncDir fsyncs dir for a caller whose rename into dir is done,
// sharing the fsync with concurrent callers.
func groupSyncDir(dir string) error {
	v, ok := folderSyncers.Load(dir)
	if !ok {
		g := &folderSyncer{}
		g.cond.L = &g.mu
		v, _ = folderSyncers.LoadOrStore(dir, g)
	}
	return v.(*folderSyncer).sync(dir)
}

func (g *folderSyncer) sync(dir string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.filling
	if b == nil {
		b = &syncBatch{}
		g.filling = b
	}
	for !b.done {
		if g.running {
			g.cond.Wait()
			continue
		}
		// This caller runs the batch's fsync. Later arrivals fill a new
		// batch: their renames may come after this fsync has begun.
		g.running, g.filling = true, nil
		g.mu.Unlock()
		err := syncFolder(dir)
		g.mu.Lock()
		b.done, b.err, g.running = true, err, false
		g.cond.Broadcast()
	}
	return b.err
}

// Deferred durability (record --sync=after-answer, DESIGN §2). WriteRenamed
// puts a file's complete bytes in place (temp file, rename) without an
// fsync, which survives the process being killed at any moment: the page
// cache belongs to the kernel. A Flusher then makes those renames durable
// against power loss off the caller's path, one flush for every file
// renamed while the previous flush ran (syncFiles: one syncfs of the
// filesystem on Linux, where it measured 2.6 ms for 32 files against 7.2 ms
// for 32 concurrent file fsyncs and a folder fsync; file and folder fsyncs
// elsewhere). Wait returns once every file handed over before it is
// durable, which record does before each manifest write and before it
// exits.

// syncFiles is the seam for the flusher tests; the value is the real flush.
// root is the folder the flusher watches (nil when it could not be opened).
var syncFiles = syncRenamed

// Flusher group-commits the deferred fsyncs of files put in place by
// WriteRenamed. The zero value is not usable; call NewFlusher.
type Flusher struct {
	onError func(rel string, err error)
	flush   func(root *os.File, batch []Renamed) error
	// root is opened before the first file is written (watch): syncfs
	// reports the writeback errors of its filesystem since that open.
	root *os.File

	mu      sync.Mutex
	cond    sync.Cond
	queue   []Renamed
	queued  uint64 // files handed over so far
	synced  uint64 // files whose flush has finished (success or not)
	running bool   // a goroutine is flushing
	failed  []error
	batches int // flushes made (tests)

	// window is how long a flush waits for more files before it starts
	// (SetWindow); a Wait cuts it short through hurry.
	window  time.Duration
	waiting int // goroutines in Wait
	hurry   chan struct{}
}

// Renamed is a file put in place and not yet durable.
type Renamed struct {
	Rel  string // relative to the store
	Path string // the file's path
	Dir  string // its folder
}

// NewFlusher returns a Flusher; onError (may be nil) is told of every file
// whose flush failed, with an error naming it.
func NewFlusher(onError func(rel string, err error)) *Flusher {
	f := &Flusher{onError: onError, flush: syncFiles, hurry: make(chan struct{}, 1)}
	f.cond.L = &f.mu
	return f
}

// SetWindow makes each flush wait up to d after its first file before it
// starts, so that the files renamed meanwhile share it (group commit with a
// window, like a database's commit delay). One flush of the filesystem
// costs about as much CPU for one file as for thirty: without a window, a
// lone client pays one per call, and that flush competes with its next
// call. A Wait (record's manifest writes, its exit) never waits for the
// window. A file is durable against power loss at most d plus one flush
// after its rename; against a killed process it is safe from the rename on.
func (f *Flusher) SetWindow(d time.Duration) {
	f.mu.Lock()
	f.window = d
	f.mu.Unlock()
}

// SetFlush replaces how a batch is made durable (fault-injection tests of
// the packages that use a Flusher); call it before the first file.
func (f *Flusher) SetFlush(flush func([]Renamed) error) {
	f.mu.Lock()
	f.flush = func(_ *os.File, batch []Renamed) error { return flush(batch) }
	f.mu.Unlock()
}

// watch opens dir as the flusher's root, once, before a file is written
// into it (a folder that cannot be opened is flushed file by file).
func (f *Flusher) watch(dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.root != nil {
		return
	}
	if d, err := os.Open(dir); err == nil {
		f.root = d
	}
}

// Close waits for every pending flush and closes the watched folder; a
// later WriteRenamed opens it again.
func (f *Flusher) Close() error {
	err := f.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.root != nil && f.queued == f.synced { // no flush is using it
		f.root.Close()
		f.root = nil
	}
	return err
}

// add hands a renamed file over; a flush starts at once unless one is
// running (its successor then takes every file added meanwhile).
func (f *Flusher) add(r Renamed) {
	f.mu.Lock()
	f.queue = append(f.queue, r)
	f.queued++
	start := !f.running
	f.running = true
	f.mu.Unlock()
	if start {
		go f.run()
	}
}

// run flushes batches until no file waits.
func (f *Flusher) run() {
	f.mu.Lock()
	for len(f.queue) > 0 {
		if f.window > 0 && f.waiting == 0 {
			f.mu.Unlock()
			t := time.NewTimer(f.window)
			select {
			case <-t.C:
			case <-f.hurry:
				t.Stop()
			}
			f.mu.Lock()
		}
		batch, flush, root := f.queue, f.flush, f.root
		f.queue = nil
		f.batches++
		f.mu.Unlock()
		err := flush(root, batch)
		var errs []error
		if err != nil {
			for _, r := range batch {
				e := fmt.Errorf("write %s: flush to disk: %w", r.Path, err)
				errs = append(errs, e)
				if f.onError != nil {
					f.onError(r.Rel, e)
				}
			}
		}
		f.mu.Lock()
		f.failed = append(f.failed, errs...)
		f.synced += uint64(len(batch))
		f.cond.Broadcast()
	}
	f.running = false
	f.mu.Unlock()
}

// Wait returns once every file handed over before the call is durable (or
// its flush failed). The error joins every failed flush so far, each naming
// its file.
func (f *Flusher) Wait() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	target := f.queued
	if f.synced < target {
		f.waiting++
		select { // a flush in its window starts now
		case f.hurry <- struct{}{}:
		default:
		}
		for f.synced < target {
			f.cond.Wait()
		}
		f.waiting--
	}
	return errors.Join(f.failed...)
}

// Pending reports how many handed-over files are not yet durable.
func (f *Flusher) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int(f.queued - f.synced)
}

// syncEach makes renamed files durable one by one: each file's fsync, then
// one fsync per folder (the portable flush; Linux uses syncfs).
func syncEach(batch []Renamed) error {
	dirs := map[string]bool{}
	for _, r := range batch {
		if err := syncPath(r.Path); err != nil {
			return err
		}
		dirs[r.Dir] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// syncPath fsyncs the file at p. A file replaced since (a later rename of
// the same name) is that later file, itself handed over.
func syncPath(p string) error {
	fl, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer fl.Close()
	if err := fl.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
