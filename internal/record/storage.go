package record

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// storage is how a Recorder reads and writes the snapshot folder. There are
// two (DESIGN §11 "Go transport"):
//
//   - runStorage, the CLI run: the caller holds the set's lock for the whole
//     run; the manifest is rebuilt from what the recorder knows, at most
//     once per ManifestInterval and at Finish; Prune is allowed.
//   - sharedStorage, the Go transport (Config.LockPerCommit): other
//     processes record into the same folder, so the recorder takes the lock
//     itself while New reads the set and around each commit, and merges the
//     manifest on disk under it; nothing is ever removed.
//
// Recorder state the implementations touch (entries, the manifest fields)
// is guarded by Recorder.mu and Recorder.mmu as documented there.
type storage interface {
	// load reads the set (Recorder.load), under the lock when the storage
	// takes it itself.
	load() error
	// loaded is told, after load, which manifest the set had (nil when
	// none), with r.entries filled from the valid files.
	loaded(m *snapshot.Manifest)
	// write writes one snapshot file (the id is claimed already); an id
	// taken on disk by a different key is a *collisionError.
	write(e snapshot.ManifestEntry, key string, data []byte) error
	// flush writes the manifest: when this run changed the set, or always
	// with force.
	flush(force bool) error
	// keepsSource reports whether an answer equal to the stored one, made
	// from src, leaves the stored source old in place.
	keepsSource(src, old source.Source) bool
	// canPrune is nil when Prune may remove files.
	canPrune() error
}

// newStorage picks the storage of cfg.
func newStorage(r *Recorder) storage {
	if r.cfg.LockPerCommit {
		return &sharedStorage{r: r, pending: map[string]snapshot.ManifestEntry{}}
	}
	return runStorage{r: r}
}

// runStorage is the CLI run's storage: the caller holds the lock.
type runStorage struct{ r *Recorder }

func (s runStorage) load() error { return s.r.load() }

func (s runStorage) loaded(m *snapshot.Manifest) {}

// write writes the file; the manifest follows at the next flush (the
// recorder marks the set dirty once the entry is known). With a flusher the
// file is renamed into place now and fsync'd after the answer.
func (s runStorage) write(e snapshot.ManifestEntry, _ string, data []byte) error {
	if s.r.flusher != nil {
		return s.r.store.WriteRenamed(e.File, data, s.r.flusher)
	}
	return s.r.store.WriteAtomic(e.File, data)
}

// keepsSource: a run keeps the stored source only when it is the same.
func (runStorage) keepsSource(src, old source.Source) bool { return src == old }

func (runStorage) canPrune() error { return nil }

// flush writes the manifest for the current entries (when they changed, or
// always with force), keeping created_at, and updated_at when the entry
// list is unchanged; unchanged bytes are not rewritten.
func (s runStorage) flush(force bool) error {
	r := s.r
	r.mmu.Lock()
	defer r.mmu.Unlock()
	r.mu.Lock()
	if !r.dirty && !force {
		r.mu.Unlock()
		return nil
	}
	entries := r.sortedEntries()
	r.dirty = false
	r.mu.Unlock()
	// The manifest lists only durable files: wait for the flush of every
	// file written so far (a failed one is listed as a problem).
	r.waitDurable()

	now := snapshot.FormatTimestamp(r.now())
	next := &snapshot.Manifest{CreatedAt: now, UpdatedAt: now, Entries: entries}
	if old := r.lastManifest; old != nil {
		if old.CreatedAt != "" {
			next.CreatedAt = old.CreatedAt
		}
		if old.UpdatedAt != "" && snapshot.SameEntries(old.Entries, entries) {
			next.UpdatedAt = old.UpdatedAt
		}
	}
	// Passing next as "old" makes WriteManifest keep exactly these times.
	if _, err := r.store.WriteManifest(entries, next, r.now()); err != nil {
		r.mu.Lock()
		r.dirty = true
		r.mu.Unlock()
		r.manifestErr = err
		r.logf("manifest: %v", err)
		return err
	}
	r.manifestErr = nil
	r.lastManifest = next
	return nil
}

// sharedStorage is the Go transport's storage: the lock is taken per
// commit. pending and repair are guarded by Recorder.mu; concurrent
// commits share one lock hold, folder fsync and manifest merge (write).
type sharedStorage struct {
	r *Recorder
	// pending: entries written but not yet merged into the manifest on
	// disk; repair: the set read at New needs its manifest completed
	// (valid files it does not list).
	pending map[string]snapshot.ManifestEntry
	repair  bool
	// qmu guards the group commit: writes waiting for it (queue) and
	// whether a caller is committing them (committing).
	qmu        sync.Mutex
	queue      []*commitJob
	committing bool
	groups     int // commit groups so far (tests)
}

// load takes the lock while the set is read: another process may be in the
// middle of a commit.
func (s *sharedStorage) load() error {
	r := s.r
	if _, err := os.Lstat(r.store.Dir); errors.Is(err, fs.ErrNotExist) {
		return r.load() // nothing to read; the folder is created by the first commit
	}
	unlock, err := r.store.LockWait(r.lockTimeout())
	if err != nil {
		return fmt.Errorf("lock %s: %w", r.display, err)
	}
	defer unlock()
	return r.load()
}

// loaded notes whether the manifest lists every valid file as it is.
func (s *sharedStorage) loaded(m *snapshot.Manifest) {
	listed := map[string]string{}
	if m != nil {
		for _, e := range m.Entries {
			listed[e.File] = e.Hash
		}
	}
	for rel, e := range s.r.entries {
		if h, ok := listed[rel]; !ok || h != e.Hash {
			s.repair = true
		}
	}
}

// keepsSource: an equal answer moves the stored source only to a smaller
// one or to another line of the same function (movesSource), so that
// processes making the same call from different places do not rewrite it
// back and forth.
func (*sharedStorage) keepsSource(src, old source.Source) bool {
	return src == old || !movesSource(src, old)
}

func (*sharedStorage) canPrune() error {
	return errors.New("a recorder that shares the snapshot folder (LockPerCommit) never prunes")
}

// collisionError: the id is taken on disk by a different request, written
// by another recorder since this one read the set.
type collisionError struct {
	rel, key string
}

func (e *collisionError) Error() string {
	return fmt.Sprintf("id collision with %s (key %s)", e.rel, e.key)
}

// write writes one snapshot file and merges its manifest entry under the
// set's lock, after checking that no other recorder took the id since this
// one read the set. A manifest that cannot be written is retried at the next
// commit and at Finish (the file itself is written).
//
// Concurrent writes are committed as a group: the first caller takes the
// lock for everyone waiting, the files are written in parallel (sharing the
// folder fsync, snapshot.WriteAtomic), the manifest is merged once, then the
// lock is released. Each caller returns once its own file is on disk.
func (s *sharedStorage) write(e snapshot.ManifestEntry, key string, data []byte) error {
	j := &commitJob{entry: e, key: key, data: data, done: make(chan struct{})}
	s.qmu.Lock()
	s.queue = append(s.queue, j)
	lead := !s.committing
	s.committing = true
	s.qmu.Unlock()
	if lead {
		s.commitQueued()
	}
	<-j.done
	return j.err
}

// commitJob is one snapshot file waiting for a group commit.
type commitJob struct {
	entry snapshot.ManifestEntry
	key   string
	data  []byte
	err   error
	done  chan struct{}
}

// commitQueued commits groups of queued writes until the queue is empty.
func (s *sharedStorage) commitQueued() {
	for {
		s.qmu.Lock()
		jobs := s.queue
		s.queue = nil
		if len(jobs) == 0 {
			s.committing = false
			s.qmu.Unlock()
			return
		}
		s.groups++
		s.qmu.Unlock()
		s.commitGroup(jobs)
		for _, j := range jobs {
			close(j.done)
		}
	}
}

// commitGroup writes jobs under one hold of the set's lock and merges their
// manifest entries once.
func (s *sharedStorage) commitGroup(jobs []*commitJob) {
	r := s.r
	unlock, err := r.store.LockWait(r.lockTimeout())
	if err != nil {
		for _, j := range jobs {
			j.err = fmt.Errorf("cannot lock %s: %w", r.display, err)
		}
		return
	}
	defer unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.err = s.writeLocked(j.entry, j.key, j.data)
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err == nil {
			s.merge()
			return
		}
	}
}

// writeLocked writes one file of a group; the lock is held.
func (s *sharedStorage) writeLocked(e snapshot.ManifestEntry, key string, data []byte) error {
	r := s.r
	for _, p := range snapshot.Providers() {
		rel := snapshot.RelPath(p, e.ID)
		b, err := r.store.ReadRel(rel, snapshot.MaxSnapshotFileSize)
		if err != nil {
			continue // absent (or unreadable: verify reports it)
		}
		if other, _ := check.CheckBytes(rel, b, r.cfg.Check); other != nil && other.Key != key {
			return &collisionError{rel: rel, key: other.Key}
		}
	}
	if err := r.store.WriteAtomic(e.File, data); err != nil {
		return err
	}
	r.mu.Lock()
	s.pending[e.File] = e
	r.mu.Unlock()
	return nil
}

// flush merges the pending entries into the manifest on disk, under the
// lock; with force also when the set read at New needs its manifest
// completed.
func (s *sharedStorage) flush(force bool) error {
	r := s.r
	r.mu.Lock()
	need := len(s.pending) > 0 || (force && s.repair)
	r.mu.Unlock()
	if !need {
		r.mmu.Lock()
		defer r.mmu.Unlock()
		return r.manifestErr
	}
	unlock, err := r.store.LockWait(r.lockTimeout())
	if err != nil {
		err = fmt.Errorf("cannot lock %s: %w", r.display, err)
		r.mmu.Lock()
		r.manifestErr = err
		r.mmu.Unlock()
		return err
	}
	defer unlock()
	return s.merge()
}

// merge rewrites the manifest as the one on disk plus what this
// recorder knows: the entries it wrote (pending) and the valid files it read
// at New. Where the manifest and this recorder disagree about a file that
// another recorder may have rewritten since, the file on disk decides.
// Nothing is removed. The lock is held.
func (s *sharedStorage) merge() error {
	r := s.r
	r.mmu.Lock()
	defer r.mmu.Unlock()
	disk := r.readManifest()
	merged := map[string]snapshot.ManifestEntry{}
	if disk != nil {
		for _, e := range disk.Entries {
			merged[e.File] = e
		}
	}
	r.mu.Lock()
	known := make([]snapshot.ManifestEntry, 0, len(r.entries))
	for _, e := range r.entries {
		known = append(known, e)
	}
	pending := make([]snapshot.ManifestEntry, 0, len(s.pending))
	for _, e := range s.pending {
		pending = append(pending, e)
	}
	r.mu.Unlock()
	for _, e := range known {
		if m, ok := merged[e.File]; ok && m == e {
			continue
		}
		if h, ok := r.hashOnDisk(e.File); ok {
			e.Hash = h
			merged[e.File] = e
		}
	}
	for _, e := range pending {
		merged[e.File] = e // written under this lock hold or an earlier one of ours
	}
	entries := make([]snapshot.ManifestEntry, 0, len(merged))
	for _, e := range merged {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].File < entries[j].File })
	if _, err := r.store.WriteManifest(entries, disk, r.now()); err != nil {
		r.manifestErr = err
		r.logf("manifest: %v", err)
		return err
	}
	r.manifestErr = nil
	r.mu.Lock()
	for _, e := range pending {
		if s.pending[e.File] == e {
			delete(s.pending, e.File)
		}
	}
	s.repair = false
	r.mu.Unlock()
	return nil
}

// readManifest reads the manifest on disk; nil when it is missing or
// invalid (it is then rebuilt from what this recorder knows).
func (r *Recorder) readManifest() *snapshot.Manifest {
	b, err := r.store.ReadRel(snapshot.ManifestName, snapshot.MaxManifestSize)
	if err != nil {
		return nil
	}
	v, err := snapshot.Decode(b)
	if err != nil || len(schema.ValidateManifest(v)) > 0 {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return snapshot.ManifestFromValue(m)
}

// hashOnDisk returns the combined hash stored in a snapshot file of the set.
func (r *Recorder) hashOnDisk(rel string) (string, bool) {
	if _, _, ok := snapshot.ValidRelPath(rel); !ok {
		return "", false
	}
	b, err := r.store.ReadRel(rel, snapshot.MaxSnapshotFileSize)
	if err != nil {
		return "", false
	}
	v, err := snapshot.Decode(b)
	if err != nil {
		return "", false
	}
	m, _ := v.(map[string]any)
	h, ok := m["hash"].(string)
	return h, ok && h != ""
}
