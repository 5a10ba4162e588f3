package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clkTck is USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on Linux).
const clkTck = 100

// CPUTime returns the user+system CPU time pid has used so far.
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after ')' are fixed.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(ut+st) * time.Second / clkTck, nil
}

// Proc is a started server process.
type Proc struct {
	Cmd    *exec.Cmd
	lines  chan string
	stderr *os.File // unlinked; the process writes to it directly
	done   chan struct{}
}

// Pinned prefixes argv with taskset -c cpu when cpu ≥ 0 and taskset exists.
func Pinned(cpu int, argv ...string) []string {
	if cpu < 0 || !HaveTaskset() {
		return argv
	}
	return append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
}

// HaveTaskset reports whether taskset is on PATH and the machine has two CPUs or more.
func HaveTaskset() bool {
	_, err := exec.LookPath("taskset")
	return err == nil
}

// Start runs argv in dir with env added, collecting stdout lines.
func Start(dir string, env []string, argv ...string) (*Proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	p := &Proc{Cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// stderr goes to a file, not a pipe: a server that logs a line per
	// request (record does) would otherwise wake the harness on every
	// request, on the CPUs being measured.
	if p.stderr, err = os.CreateTemp("", "tfbench-stderr-"); err != nil {
		return nil, err
	}
	_ = os.Remove(p.stderr.Name())
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		p.stderr.Close()
		return nil, err
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody listens: drop
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return p, nil
}

// WaitLine waits for a stdout line starting with prefix and returns the rest.
func (p *Proc) WaitLine(prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case l := <-p.lines:
			if strings.HasPrefix(l, prefix) {
				return strings.TrimPrefix(l, prefix), nil
			}
		case <-p.done:
			return "", fmt.Errorf("%s exited before printing %q: %s", p.Cmd.Path, prefix, p.Stderr())
		case <-t.C:
			return "", fmt.Errorf("%s: no %q line after %s: %s", p.Cmd.Path, prefix, timeout, p.Stderr())
		}
	}
}

// Lines is the channel of stdout lines.
func (p *Proc) Lines() <-chan string { return p.lines }

// Stderr is the start (64 KB) of what the process wrote to stderr.
func (p *Proc) Stderr() string {
	b := make([]byte, 64<<10)
	n, _ := p.stderr.ReadAt(b, 0)
	return strings.TrimSpace(string(b[:n]))
}

// Stop sends SIGINT, waits up to timeout (then kills) and returns the peak
// RSS in bytes and the exit error.
func (p *Proc) Stop(timeout time.Duration) (int64, error) {
	_ = p.Cmd.Process.Signal(syscall.SIGINT)
	return p.Wait(timeout)
}

// Wait waits up to timeout for the process to exit by itself (then kills
// it) and returns the peak RSS in bytes and the exit error.
func (p *Proc) Wait(timeout time.Duration) (int64, error) {
	ch := make(chan error, 1)
	go func() { ch <- p.Cmd.Wait() }()
	var err error
	select {
	case err = <-ch:
	case <-time.After(timeout):
		_ = p.Cmd.Process.Kill()
		err = <-ch
	}
	return maxRSS(p.Cmd.ProcessState), err
}

func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024 // kilobytes on Linux
	}
	return 0
}

// Timed runs argv to completion in dir and returns its wall time and peak
// RSS (bytes, ru_maxrss from wait4). With self (the tfbench binary) the
// program is started by a fresh `tfbench rusage` process: Linux charges a
// child's ru_maxrss with the RSS of the process that forked it (its memory
// map before exec), so measuring from the large harness process would
// inflate small programs' peaks.
func Timed(self, dir string, argv ...string) (time.Duration, int64, string, error) {
	if self != "" {
		argv = append([]string{self, "rusage", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: 64 << 10}
	// The rusage line is the last thing the wrapper writes on stderr: keep
	// stderr's end, whatever the program printed on stdout before it.
	errTail := &tailWriter{n: 64 << 10}
	cmd.Stderr = errTail
	start := time.Now()
	err := cmd.Run()
	wall, rss := time.Since(start), maxRSS(cmd.ProcessState)
	stderr := string(errTail.buf)
	if self != "" {
		i := strings.LastIndex(stderr, RusagePrefix)
		var w, kb int64
		if i < 0 {
			return wall, 0, out.String() + stderr, fmt.Errorf("tfbench rusage printed no %q line", RusagePrefix)
		}
		if _, e := fmt.Sscanf(stderr[i:], RusagePrefix+"%d %d", &w, &kb); e != nil {
			return wall, 0, out.String() + stderr, fmt.Errorf("tfbench rusage line %q: %v", stderr[i:], e)
		}
		wall, rss = time.Duration(w), kb*1024
	}
	return wall, rss, out.String() + stderr, err
}

// tailWriter keeps the last n bytes written to it.
type tailWriter struct {
	n   int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.n; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// RusagePrefix starts the line `tfbench rusage` prints: wall nanoseconds and ru_maxrss kilobytes.
const RusagePrefix = "TFBENCH-RUSAGE "

// Rusage runs argv (inheriting stdout and stderr), then prints its wall
// time and peak RSS on stderr after RusagePrefix. It returns the exit error.
func Rusage(argv []string, stderr io.Writer) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState != nil {
		fmt.Fprintf(stderr, "\n%s%d %d\n", RusagePrefix, wall.Nanoseconds(), maxRSS(cmd.ProcessState)/1024)
	}
	return err
}

// HWM is the peak resident set of a running process (VmHWM), 0 if unknown.
func HWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		q := p
		if len(q) > l.n {
			q = q[:l.n]
		}
		l.n -= len(q)
		_, _ = l.w.Write(q)
	}
	return len(p), nil
}
