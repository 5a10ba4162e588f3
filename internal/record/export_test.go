package record

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
