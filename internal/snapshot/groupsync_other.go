//go:build !linux

package snapshot

// syncRenamed makes a batch of renamed files durable: each file's fsync,
// then its folder's.
func syncRenamed(batch []Renamed) error { return syncEach(batch) }
