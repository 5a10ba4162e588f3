package snapshot

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inject replaces one of the store's OS seams for the test.
func inject[T any](t *testing.T, seam *T, fake T) {
	old := *seam
	*seam = fake
	t.Cleanup(func() { *seam = old })
}

// tempFiles lists the hidden temp files below dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), ".tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Disk faults at each step of WriteAtomic and WriteRenamed: the disk fills
// up half-way through the temp file, fsync fails (WriteAtomic only: a
// WriteRenamed flush fails later, TestFlusherReportsFailedFlushNamingEachFile),
// rename fails. Every time the original file is unchanged, no temp file is
// left, and the error names the path and keeps the OS error for errors.Is.
func TestWriteAtomicDiskFaults(t *testing.T) {
	const rel = "openai/0123456789ab.json"
	orig := []byte("{\"original\": true}\n")
	cases := []struct {
		name  string
		fault func(t *testing.T)
		errno syscall.Errno
	}{
		{"disk full mid-write", func(t *testing.T) {
			inject(t, &writeTemp, func(f *os.File, b []byte) (int, error) {
				n, _ := f.Write(b[:len(b)/2])
				return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
			})
		}, syscall.ENOSPC},
		{"disk full at first byte", func(t *testing.T) {
			inject(t, &writeTemp, func(f *os.File, b []byte) (int, error) {
				return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
			})
		}, syscall.ENOSPC},
		{"fsync fails", func(t *testing.T) {
			inject(t, &syncTemp, func(f *os.File) error { return &os.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO} })
		}, syscall.EIO},
		{"rename fails", func(t *testing.T) {
			inject(t, &renameTemp, func(a, b string) error { return &os.LinkError{Op: "rename", Old: a, New: b, Err: syscall.EROFS} })
		}, syscall.EROFS},
	}
	writers := map[string]func(st *Store, rel string, data []byte) error{
		"WriteAtomic":  (*Store).WriteAtomic,
		"WriteRenamed": func(st *Store, rel string, data []byte) error { return st.WriteRenamed(rel, data, NewFlusher(nil)) },
	}
	for _, tc := range cases {
		for _, existing := range []bool{true, false} {
			for wname, write := range writers {
				if wname == "WriteRenamed" && tc.errno == syscall.EIO {
					continue
				}
				name := wname + "/" + tc.name + "/new file"
				if existing {
					name = wname + "/" + tc.name + "/existing file"
				}
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					st := &Store{Dir: dir}
					target := filepath.Join(dir, "openai", "0123456789ab.json")
					if existing {
						if err := st.WriteAtomic(rel, orig); err != nil {
							t.Fatal(err)
						}
					}
					tc.fault(t)
					err := write(st, rel, bytes.Repeat([]byte("new content "), 1000))
					if err == nil {
						t.Fatal("write succeeded through a disk fault")
					}
					if !strings.Contains(err.Error(), target) {
						t.Errorf("error %q does not name %s", err, target)
					}
					if !errors.Is(err, tc.errno) {
						t.Errorf("error %v does not wrap %v", err, tc.errno)
					}
					got, rerr := os.ReadFile(target)
					switch {
					case existing && !bytes.Equal(got, orig):
						t.Errorf("original changed to %q (%v)", got, rerr)
					case !existing && !errors.Is(rerr, os.ErrNotExist):
						t.Errorf("a failed first write left %s (%d bytes)", target, len(got))
					}
					if tmp := tempFiles(t, dir); len(tmp) > 0 {
						t.Errorf("temp files left behind: %v", tmp)
					}
				})
			}
		}
	}
}

// A manifest write that hits a full disk keeps the previous manifest.
func TestWriteManifestDiskFullKeepsOld(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	es := []ManifestEntry{{ID: "0123456789ab", Provider: "openai", File: "openai/0123456789ab.json", Hash: "sha256:" + strings.Repeat("a", 64)}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := st.WriteManifest(es, nil, t0); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(st.Dir, ManifestName))
	inject(t, &writeTemp, func(f *os.File, b []byte) (int, error) {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	})
	es = append(es, ManifestEntry{ID: "0123456789ac", Provider: "openai", File: "openai/0123456789ac.json", Hash: es[0].Hash})
	if _, err := st.WriteManifest(es, nil, t0); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), ManifestName) {
		t.Fatalf("manifest write on a full disk: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(st.Dir, ManifestName))
	if !bytes.Equal(before, after) {
		t.Error("the old manifest changed")
	}
	if tmp := tempFiles(t, st.Dir); len(tmp) > 0 {
		t.Errorf("temp files left behind: %v", tmp)
	}
}

// A real full disk (a 64 KiB tmpfs), only under make stress: mounting needs
// root and touches the host's mount table.
func TestWriteAtomicTmpfsFull(t *testing.T) {
	if os.Getenv("TRACEFORGE_STRESS") == "" {
		t.Skip("set TRACEFORGE_STRESS=1 (make stress) to mount a tmpfs")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := runCmd("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = runCmd("umount", dir) })
	st := &Store{Dir: dir}
	orig := []byte("{\"original\": true}\n")
	if err := st.WriteAtomic("openai/0123456789ab.json", orig); err != nil {
		t.Fatal(err)
	}
	err := st.WriteAtomic("openai/0123456789ab.json", bytes.Repeat([]byte("x"), 256<<10))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "0123456789ab.json") {
		t.Fatalf("write to a full tmpfs: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "openai", "0123456789ab.json")); !bytes.Equal(got, orig) {
		t.Errorf("original changed")
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temp files left behind: %v", tmp)
	}
}

// CleanTemp removes only hidden temp files: never the lock, a snapshot, or
// a dot-file that merely looks similar in another folder.
func TestCleanTempRemovesOnlyTempFiles(t *testing.T) {
	dir := t.TempDir()
	st := &Store{Dir: dir}
	keep := []string{".lock", "manifest.json", "openai/0123456789ab.json", ".gitkeep", "notes/.x.tmp-1"}
	drop := []string{".manifest.tmp-0a1b2c", "openai/.0123456789ab.tmp-ffeedd", "anthropic/.aaaaaaaaaaaa.tmp-000000"}
	for _, f := range append(append([]string{}, keep...), drop...) {
		p := filepath.Join(dir, filepath.FromSlash(f))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A temp-looking symlink is not a regular file: left alone.
	_ = os.Symlink("/etc/passwd", filepath.Join(dir, "openai", ".link.tmp-1"))
	removed := st.CleanTemp()
	if len(removed) != len(drop) {
		t.Errorf("removed %v, want %v", removed, drop)
	}
	for _, f := range keep {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s was removed", f)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "openai", ".link.tmp-1")); err != nil {
		t.Errorf("symlink removed")
	}
}

func runCmd(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

// Temp files are hidden, named so that CleanTemp finds them, distinct for
// every write, and carry this process's id (two processes never pick the
// same name).
func TestTempNamesHiddenUniquePerProcess(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	var names []string
	inject(t, &writeTemp, func(f *os.File, b []byte) (int, error) {
		names = append(names, filepath.Base(f.Name()))
		return f.Write(b)
	})
	for range 2 {
		if err := st.WriteAtomic("openai/0123456789ab.json", []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.WriteRenamed("openai/0123456789ab.json", []byte("{}\n"), NewFlusher(nil)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !strings.HasPrefix(n, ".0123456789ab.tmp-"+strconv.Itoa(os.Getpid())) || seen[n] {
			t.Errorf("temp name %q: want hidden, .tmp-<pid>…, unique (all: %v)", n, names)
		}
		seen[n] = true
	}
}
