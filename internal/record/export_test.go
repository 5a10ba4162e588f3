package record

// SetMaxSnapshot lowers the snapshot size cap for one test (the proxy must
// not serve calls while it changes); the returned func restores it.
func SetMaxSnapshot(n int64) (restore func()) {
	old := maxSnapshot
	maxSnapshot = n
	return func() { maxSnapshot = old }
}
