package record

import "github.com/traceforge/traceforge/internal/snapshot"

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
