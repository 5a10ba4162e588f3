package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the ")" that closes the command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", file, err)
			}
			return pid
		}
	}
	t.Fatalf("the command never wrote %s", file)
	return 0
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("%s (pid %d) outlived traceforge", what, pid)
}

// DESIGN §12.10: SIGINT/SIGTERM to traceforge (ctx cancelled) reaches
// COMMAND's whole process group, so a grandchild (here `sleep`, started by
// `sh`; with `go test`, the test binaries) does not live on with parent 1.
func TestRunChildSignalKillsGrandchildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sleep.pid")
	io, _, _ := testStreams(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	type out struct {
		res childResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := runChild(ctx, io, []string{"sh", "-c", "sleep 300 & echo $! > sleep.pid; wait"}, nil)
		done <- out{res, err}
	}()
	pid := readPID(t, pidFile)
	if !alive(pid) {
		t.Fatalf("grandchild %d not running before the signal", pid)
	}
	cancel()
	var o out
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("runChild did not return after cancellation")
	}
	if o.err != nil {
		t.Fatalf("runChild: %v", o.err)
	}
	if o.res.Code != 128+int(syscall.SIGTERM) {
		t.Errorf("code = %d, want %d (killed by SIGTERM)", o.res.Code, 128+int(syscall.SIGTERM))
	}
	waitGone(t, pid, "sleep started by sh")
}

// A grandchild that ignores SIGTERM is killed after the grace period.
func TestRunChildKillsAfterGrace(t *testing.T) {
	old := killGrace
	killGrace = 200 * time.Millisecond
	t.Cleanup(func() { killGrace = old })
	dir := t.TempDir()
	io, _, _ := testStreams(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runChild(ctx, io, []string{"sh", "-c", "trap '' TERM; (trap '' TERM; sleep 300) & echo $! > sleep.pid; wait"}, nil)
		done <- err
	}()
	pid := readPID(t, filepath.Join(dir, "sleep.pid"))
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runChild: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("runChild did not return after the grace period")
	}
	waitGone(t, pid, "a grandchild ignoring SIGTERM")
}

// When COMMAND exits by itself, what it left running in its group is ended
// too, and COMMAND's own exit code is kept.
func TestRunChildCleansUpAfterExit(t *testing.T) {
	dir := t.TempDir()
	io, _, _ := testStreams(t, dir)
	res, err := runChild(context.Background(), io, []string{"sh", "-c", "sleep 300 & echo $! > sleep.pid; exit 7"}, nil)
	if err != nil {
		t.Fatalf("runChild: %v", err)
	}
	if res.Code != 7 {
		t.Errorf("code = %d, want 7", res.Code)
	}
	waitGone(t, readPID(t, filepath.Join(dir, "sleep.pid")), "a backgrounded grandchild")
}
