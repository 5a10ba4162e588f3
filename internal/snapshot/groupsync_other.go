//go:build !linux

package snapshot

import "os"

// syncRenamed makes a batch of renamed files durable: each file's fsync,
// then its folder's.
func syncRenamed(_ *os.File, batch []Renamed) error { return syncEach(batch) }
