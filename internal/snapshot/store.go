package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// DefaultDir is the snapshot folder's name under the project root, used when
// no folder is named (--dir, record.Config.Dir, the Go transport).
const DefaultDir = ".ai-snapshots"

// Size caps for untrusted files (DESIGN §10).
const (
	MaxSnapshotFileSize = 64 << 20
	MaxManifestSize     = 256 << 20
)

// Names inside a snapshot folder.
const (
	ManifestName = "manifest.json"
	LockName     = ".lock"
	LegacyName   = "snapshots.json"
)

// Sentinel errors of the store.
var (
	ErrTooLarge = errors.New("file too large")
	ErrSymlink  = errors.New("symbolic link")
	ErrNotFound = errors.New("not found")
	ErrBadPath  = errors.New("path not allowed")
	ErrLocked   = errors.New("snapshot folder is locked")
	ErrNotFile  = errors.New("not a regular file")
)

// Store is a snapshot folder on disk.
type Store struct {
	Dir string
	// Temps, when set, supplies the temp files of writes into the set's
	// subfolders (snapshot files), created ahead of need off the writer's
	// path; the owner closes it once done writing.
	Temps *TempPool
}

// ValidRelPath reports whether rel is exactly <provider>/<id>.json with an
// allow-listed provider and a well-formed id; it is checked before any path
// is built from untrusted input.
func ValidRelPath(rel string) (provider, id string, ok bool) {
	p, name, found := strings.Cut(rel, "/")
	if !found || !ValidProvider(p) || !strings.HasSuffix(name, ".json") {
		return "", "", false
	}
	id = strings.TrimSuffix(name, ".json")
	if !ValidID(id) {
		return "", "", false
	}
	return p, id, true
}

// ReadRel reads a file of the set (a relative, slash-separated name that
// must already be validated) with the untrusted-input rules: no symlink
// anywhere below the set folder, a regular file, at most limit bytes.
func (s *Store) ReadRel(rel string, limit int64) ([]byte, error) {
	return s.ReadRelInto(rel, limit, nil)
}

// ReadRelInto is ReadRel reading into buf (grown as needed), so that a
// loop over many files reuses one buffer; the result aliases buf.
func (s *Store) ReadRelInto(rel string, limit int64, buf []byte) ([]byte, error) {
	if strings.Contains(rel, "..") || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return nil, fmt.Errorf("%s: %w", rel, ErrBadPath)
	}
	parts := strings.Split(rel, "/")
	p := s.Dir
	// The folders on the way are checked with Lstat; the file itself by
	// opening it without following a symlink (ELOOP) and without blocking
	// on a FIFO, then fstat on what was opened: one syscall fewer per file
	// than an Lstat before the open, and no window between the two.
	for i, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w", rel, ErrNotFound)
			}
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", strings.Join(parts[:i+1], "/"), ErrSymlink)
		}
	}
	p = filepath.Join(p, parts[len(parts)-1])
	// The file is opened, stat'ed and read with plain system calls, not
	// through an os.File, which would try to add it to the network poller
	// (a failing epoll_ctl for every file a static check reads). The errors
	// are the ones os would return.
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP):
			return nil, fmt.Errorf("%s: %w", rel, ErrSymlink)
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: %w", rel, ErrNotFound)
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("%s: %w", rel, ErrNotFile)
	}
	if st.Size > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", rel, ErrTooLarge, st.Size, limit)
	}
	// Read up to limit+1 bytes (the file may grow while it is read).
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+1)
	}
	data := buf[:0]
	for int64(len(data)) <= limit {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		room := data[len(data):cap(data)]
		if left := limit + 1 - int64(len(data)); int64(len(room)) > left {
			room = room[:left]
		}
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = syscall.Read(fd, room)
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if n <= 0 {
			break
		}
		data = data[:len(data)+n]
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: the limit is %d bytes", rel, ErrTooLarge, limit)
	}
	return data, nil
}

// ignoringEINTR calls f until it returns an error other than EINTR.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// Entry is one name found in the set folder.
type Entry struct {
	Rel      string // slash-separated path relative to the set
	Provider string // for snapshot files
	ID       string // for snapshot files
	Kind     EntryKind
	Symlink  bool
}

// EntryKind classifies a name found in the set folder.
type EntryKind int

// Kinds of entries.
const (
	EntrySnapshot   EntryKind = iota // <provider>/<id>.json
	EntryManifest                    // manifest.json
	EntryLegacy                      // snapshots.json (format 0.9.0 / unfinished migration)
	EntryUnexpected                  // anything else that is not a hidden dot-file
)

// Scan lists the set folder without following symlinks. Hidden dot-files
// (temp files, the lock) are skipped.
func (s *Store) Scan() ([]Entry, error) {
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", s.Dir, ErrSymlink)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", s.Dir)
	}
	top, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range top {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		link := e.Type()&fs.ModeSymlink != 0
		switch {
		case name == ManifestName:
			out = append(out, Entry{Rel: name, Kind: EntryManifest, Symlink: link})
		case name == LegacyName:
			out = append(out, Entry{Rel: name, Kind: EntryLegacy, Symlink: link})
		case ValidProvider(name) && e.IsDir() && !link:
			sub, err := os.ReadDir(filepath.Join(s.Dir, name))
			if err != nil {
				return nil, err
			}
			for _, f := range sub {
				fn := f.Name()
				if strings.HasPrefix(fn, ".") {
					continue
				}
				rel := name + "/" + fn
				fl := f.Type()&fs.ModeSymlink != 0
				if p, id, ok := ValidRelPath(rel); ok && (f.Type().IsRegular() || fl) {
					out = append(out, Entry{Rel: rel, Provider: p, ID: id, Kind: EntrySnapshot, Symlink: fl})
				} else {
					out = append(out, Entry{Rel: rel, Kind: EntryUnexpected, Symlink: fl})
				}
			}
		default:
			out = append(out, Entry{Rel: name, Kind: EntryUnexpected, Symlink: link})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out, nil
}

// Seams for the disk-fault tests (a full disk, a failing fsync or rename);
// the values are the real OS calls.
var (
	writeTemp  = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	syncTemp   = func(f *os.File) error { return f.Sync() }
	renameTemp = rename
)

// rename is os.Rename without its Lstat of the target (one path lookup
// per snapshot written, ~15 µs here): rename(2) itself refuses to put a
// file over a directory (EISDIR), which is all that Lstat was for.
func rename(from, to string) error {
	for {
		err := syscall.Rename(from, to)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
}

// WriteAtomic writes data to rel (validated by the caller) through a hidden
// temp file in the same folder: write, fsync, rename, fsync the folder. On
// any error the temp file is removed and the old file is untouched.
// Concurrent calls share the folder fsync (groupSyncDir); each returns once
// its own rename is on disk.
func (s *Store) WriteAtomic(rel string, data []byte) error { return s.write(rel, data, nil) }

// WriteRenamed is WriteAtomic without the fsyncs: the complete bytes are
// written to the temp file and renamed into place, which survives the
// process being killed at any moment, and fl makes the rename durable
// against power loss later (Flusher.Wait). On any error the temp file is
// removed and the old file is untouched.
func (s *Store) WriteRenamed(rel string, data []byte, fl *Flusher) error {
	return s.write(rel, data, fl)
}

// tempSeq numbers this process's temp files; tempTag (the process id and
// random bytes) keeps the names of two processes apart, on one machine or
// sharing a folder. O_EXCL refuses any name that exists.
var (
	tempSeq atomic.Uint64
	tempTag = func() string {
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		return strconv.Itoa(os.Getpid()) + hex.EncodeToString(rnd[:]) + "-"
	}()
)

// write is WriteAtomic (fl nil) or WriteRenamed.
func (s *Store) write(rel string, data []byte, fl *Flusher) error {
	if strings.Contains(rel, "..") || strings.HasPrefix(rel, "/") {
		return fmt.Errorf("%s: %w", rel, ErrBadPath)
	}
	target := filepath.Join(s.Dir, filepath.FromSlash(rel))
	dir := filepath.Dir(target)
	// A real folder (Lstat: not a symlink) needs nothing more: one system
	// call for every write but a folder's first.
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create folder %s: %w", dir, err)
		}
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %w", dir, ErrSymlink)
		}
	}
	if fl != nil {
		fl.watch(dir)
	}
	var f *os.File
	var tmp string
	if s.Temps != nil && dir != filepath.Clean(s.Dir) {
		f, tmp = s.Temps.take(dir)
		// Replacements are made once this file is renamed (or removed).
		defer s.Temps.refill(dir)
	}
	if f == nil {
		var err error
		if f, tmp, err = createTemp(dir, strings.TrimSuffix(filepath.Base(target), ".json")); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", target, err)
	}
	if _, err := writeTemp(f, data); err != nil {
		return fail(err)
	}
	if fl == nil {
		if err := syncTemp(f); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := renameTemp(tmp, target); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", target, err)
	}
	if fl != nil {
		fl.add(Renamed{Rel: rel, Path: target, Dir: dir})
		return nil
	}
	return groupSyncDir(dir)
}

// createTemp creates a new hidden temp file in dir named after base. It
// opens the file itself: os.OpenFile would try to add a regular file to the
// network poller (four fcntl calls and a failing epoll_ctl per file, on
// every snapshot written), os.NewFile does not.
func createTemp(dir, base string) (*os.File, string, error) {
	tmp := filepath.Join(dir, "."+base+".tmp-"+tempTag+strconv.FormatUint(tempSeq.Add(1), 36))
	for {
		fd, err := syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o644)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, tmp, &os.PathError{Op: "open", Path: tmp, Err: err}
		}
		return os.NewFile(uintptr(fd), tmp), tmp, nil
	}
}

// SyncDir fsyncs a folder so that a rename into it survives a crash.
func SyncDir(dir string) error { return syncDir(dir) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// Remove deletes a snapshot file of the set (validated rel).
func (s *Store) Remove(rel string) error {
	if _, _, ok := ValidRelPath(rel); !ok && rel != LegacyName {
		return fmt.Errorf("%s: %w", rel, ErrBadPath)
	}
	if err := os.Remove(filepath.Join(s.Dir, filepath.FromSlash(rel))); err != nil {
		return err
	}
	return syncDir(filepath.Dir(filepath.Join(s.Dir, filepath.FromSlash(rel))))
}

// CleanTemp removes stray hidden temp files left by an interrupted writer.
func (s *Store) CleanTemp() (removed []string) {
	for _, sub := range append([]string{""}, Providers()...) {
		d := filepath.Join(s.Dir, sub)
		es, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range es {
			if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") && e.Type().IsRegular() {
				if os.Remove(filepath.Join(d, e.Name())) == nil {
					removed = append(removed, filepath.ToSlash(filepath.Join(sub, e.Name())))
				}
			}
		}
	}
	return removed
}
