package snapshot

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncRenamed makes a batch of renamed files durable with one syncfs of the
// filesystem holding them (their data, inodes and folder entries), through
// root, opened before the files were written, so that syncfs also reports
// a writeback error that happened before this call. Files on another
// filesystem than root, or a refused syncfs, fall back to per-file fsyncs.
func syncRenamed(root *os.File, batch []Renamed) error {
	if len(batch) == 0 {
		return nil
	}
	if root == nil {
		return syncEach(batch)
	}
	var st0 syscall.Stat_t
	if err := syscall.Fstat(int(root.Fd()), &st0); err != nil {
		return syncEach(batch)
	}
	seen := map[string]bool{}
	for _, r := range batch {
		if seen[r.Dir] {
			continue
		}
		seen[r.Dir] = true
		var st syscall.Stat_t
		if syscall.Stat(r.Dir, &st) != nil || st.Dev != st0.Dev {
			return syncEach(batch) // another filesystem: file by file
		}
	}
	if err := unix.Syncfs(int(root.Fd())); err != nil {
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) {
			return syncEach(batch)
		}
		return &os.PathError{Op: "syncfs", Path: root.Name(), Err: err}
	}
	return nil
}
