package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Lock takes the set's OS lock (.ai-snapshots/.lock) without waiting. The
// kernel releases it if the process dies. It fails with ErrLocked when
// another process holds it.
func (s *Store) Lock() (unlock func(), err error) { return s.lock(0) }

// LockWait takes the lock, waiting up to timeout.
func (s *Store) LockWait(timeout time.Duration) (unlock func(), err error) { return s.lock(timeout) }

func (s *Store) lock(timeout time.Duration) (func(), error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	p := filepath.Join(s.Dir, LockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", p, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s: %w", p, ErrLocked)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
