package snapshot

import (
	"sync"
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
