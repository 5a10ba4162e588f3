package record

import (
	"fmt"
	"sync"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// CheckAgainstFull makes every file a recorder writes also be decoded back
// and get the full check (key, lineage and record hash recomputed from the
// decoded file), and collects each file that does not decode back to the
// document the recorder checked, or whose full check finds otherwise than
// the recorder's check of that document with its own values (check.Built).
// The returned func reports the differences; TestMain fails the run on any.
func CheckAgainstFull() (differences func() []string) {
	var mu sync.Mutex
	var out []string
	checkedDiffers = func(rel string, asWritten, full finding.Findings, err error) {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, fmt.Sprintf("%s: checked as written %v, full check of the file decoded back %v (decoding error %v, or a different document)", rel, asWritten, full, err))
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), out...)
	}
}

// WithoutFullCheck turns CheckAgainstFull off until restore is
// called: a benchmark measures one check per file, as record runs it.
func WithoutFullCheck() (restore func()) {
	old := checkedDiffers
	checkedDiffers = nil
	return func() { checkedDiffers = old }
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
