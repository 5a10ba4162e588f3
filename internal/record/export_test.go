package record

import (
	"fmt"
	"sync"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// CheckBuiltAgainstFull makes every file a recorder writes also get the
// full check (key, lineage and record hash recomputed from the decoded
// file) and collects each file where its findings differ from those of
// the check that took the recorder's own values (check.Built). The
// returned func reports the differences; TestMain fails the run on any.
func CheckBuiltAgainstFull() (differences func() []string) {
	var mu sync.Mutex
	var out []string
	builtDiffers = func(rel string, withBuilt, full finding.Findings) {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, fmt.Sprintf("%s: with the record's values %v, full check %v", rel, withBuilt, full))
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), out...)
	}
}

// WithoutBuiltCheck turns CheckBuiltAgainstFull off until restore is
// called: a benchmark measures one check per file, as record runs it.
func WithoutBuiltCheck() (restore func()) {
	old := builtDiffers
	builtDiffers = nil
	return func() { builtDiffers = old }
}

// SetMaxSnapshot lowers the snapshot size cap for one test (the proxy must
// not serve calls while it changes); the returned func restores it.
func SetMaxSnapshot(n int64) (restore func()) {
	old := maxSnapshot
	maxSnapshot = n
	return func() { maxSnapshot = old }
}

// CommitQueue reports, for a LockPerCommit recorder, how many writes wait
// for a group commit and how many groups were committed so far.
func CommitQueue(r *Recorder) (queued, groups int) {
	s := r.storage.(*sharedStorage)
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue), s.groups
}

// InjectFlushFault makes the recorder's deferred fsyncs (SyncAfterAnswer)
// fail with err; call it before the first call.
func InjectFlushFault(r *Recorder, fault func(batch []snapshot.Renamed) error) {
	r.flusher.SetFlush(fault)
}

// Flusher is the recorder's deferred-fsync committer (nil with
// SyncBeforeAnswer or LockPerCommit).
func Flusher(r *Recorder) *snapshot.Flusher { return r.flusher }
