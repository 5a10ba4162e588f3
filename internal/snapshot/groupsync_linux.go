package snapshot

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncRenamed makes a batch of renamed files durable with one syncfs of the
// filesystem holding them (their data, inodes and folder entries), falling
// back to per-file fsyncs where syncfs is refused.
func syncRenamed(batch []Renamed) error {
	if len(batch) == 0 {
		return nil
	}
	d, err := os.Open(batch[0].Dir)
	if err != nil {
		return err
	}
	defer d.Close()
	same := true
	var st0 syscall.Stat_t
	if err := syscall.Fstat(int(d.Fd()), &st0); err != nil {
		same = false
	}
	seen := map[string]bool{batch[0].Dir: true}
	for _, r := range batch[1:] {
		if !same || seen[r.Dir] {
			continue
		}
		seen[r.Dir] = true
		var st syscall.Stat_t
		if syscall.Stat(r.Dir, &st) != nil || st.Dev != st0.Dev {
			same = false // another filesystem: flush file by file
		}
	}
	if !same {
		return syncEach(batch)
	}
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) {
			return syncEach(batch)
		}
		return &os.PathError{Op: "syncfs", Path: batch[0].Dir, Err: err}
	}
	return nil
}
