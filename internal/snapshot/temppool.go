package snapshot

import (
	"os"
	"sync"
	"syscall"
)

// TempPool keeps a few empty hidden temp files per folder, created ahead of
// need, so that a write's critical path skips creating one (on ext4 the
// costliest step of a snapshot write: ~100 µs of kernel time, more while a
// flush runs). A file is taken by one write (Store.Temps), filled and renamed
// into place; the pool makes a replacement in the background. The files are
// named like every temp file (".pool.tmp-…"): verify and Scan skip them,
// and CleanTemp removes those a killed process left. The zero value is not
// usable; call NewTempPool.
type TempPool struct {
	size int

	mu      sync.Mutex
	free    map[string][]pooledTemp // by folder
	filling map[string]bool         // a goroutine is creating files for the folder
	closed  bool
	wg      sync.WaitGroup
	created int // files created so far (tests)
}

type pooledTemp struct {
	f    *os.File
	path string
}

// NewTempPool returns a pool that keeps size files per folder ready.
func NewTempPool(size int) *TempPool {
	return &TempPool{size: max(size, 1), free: map[string][]pooledTemp{}, filling: map[string]bool{}}
}

// take returns a ready temp file of dir (nil when none is ready: the caller
// creates its own). The writer calls refill once its file is renamed.
func (p *TempPool) take(dir string) (*os.File, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ""
	}
	for fs := p.free[dir]; len(fs) > 0; fs = p.free[dir] {
		t := fs[len(fs)-1]
		p.free[dir] = fs[:len(fs)-1]
		if linked(t.f) {
			return t.f, t.path
		}
		// Removed since it was made (the folder was deleted and made
		// again): a rename of it would fail.
		t.f.Close()
	}
	return nil, ""
}

// linked reports whether f still has a name (a link count above zero).
func linked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Nlink > 0
	}
	return true
}

// refill starts making replacements for the files taken from dir. Writers
// call it after their rename, not at take: a creation holds the folder's
// lock, and one running beside the rename it replaces a file for could
// delay that rename.
func (p *TempPool) refill(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.filling[dir] || len(p.free[dir]) >= p.size {
		return
	}
	p.filling[dir] = true
	p.wg.Add(1)
	go p.fill(dir)
}

// fill creates temp files in dir until the pool holds size of them (or a
// creation fails: writes then create their own, as without a pool).
func (p *TempPool) fill(dir string) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		if p.closed || len(p.free[dir]) >= p.size {
			p.filling[dir] = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		f, path, err := createTemp(dir, "pool")
		p.mu.Lock()
		if err != nil || p.closed {
			p.filling[dir] = false
			p.mu.Unlock()
			if err == nil {
				f.Close()
				os.Remove(path)
			}
			return
		}
		p.free[dir] = append(p.free[dir], pooledTemp{f: f, path: path})
		p.created++
		p.mu.Unlock()
	}
}

// Close removes every file not taken and stops making new ones; a write
// after Close creates its own temp file.
func (p *TempPool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for dir, fs := range p.free {
		for _, t := range fs {
			t.f.Close()
			os.Remove(t.path)
		}
		delete(p.free, dir)
	}
}
