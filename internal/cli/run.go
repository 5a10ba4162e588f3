package cli

import (
	"context"
	"errors"
	"fmt"

	"os/exec"
	"strings"
	"syscall"
	"time"
)

// childResult is how COMMAND ended.
type childResult struct {
	Code int    // exit code, or 128+N when killed by signal N
	Line string // "COMMAND exited N"
}

// errCommandNotFound: COMMAND could not be started (exit 2).
var errCommandNotFound = errors.New("command not found")

// killGrace is how long COMMAND's process group has to exit after SIGTERM
// before it is killed. A variable so tests can shorten it.
var killGrace = 10 * time.Second

// runChild runs argv with extra environment variables appended (overriding
// earlier ones) and stdio passed through, in a process group of its own
// (DESIGN §12.10: no grandchild outlives traceforge). When ctx is cancelled
// (SIGINT/SIGTERM to traceforge) the whole group gets SIGTERM, then SIGKILL
// after killGrace; when COMMAND exits by itself, whatever it left running in
// its group (a backgrounded server, a test binary) is killed the same way.
func runChild(ctx context.Context, io *IOStreams, argv []string, extraEnv []string) (childResult, error) {
	if len(argv) == 0 {
		return childResult{}, errors.New("no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return childResult{}, withCode(ExitUsage, fmt.Errorf("%w: %s", errCommandNotFound, argv[0]), "check the command after --; it must be on PATH or a path to an executable")
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = mergeEnv(io.Environ(), extraEnv)
	cmd.Stdin = io.In
	cmd.Stdout = io.Out
	cmd.Stderr = io.ErrOut
	cmd.Dir = io.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// With a non-file stdout (tests, an embedding caller) exec copies through
	// a pipe that a grandchild inherits; Wait would then block until that
	// grandchild exits. WaitDelay bounds it, after which the group is killed.
	// The real CLI hands COMMAND the terminal's files directly.
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Start(); err != nil {
		return childResult{}, withCode(ExitUsage, fmt.Errorf("start %s: %w", argv[0], err), "check the command after --")
	}
	pgid := cmd.Process.Pid // Setpgid: the group's id is the child's pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
		stopGroup(pgid, nil)
	case <-ctx.Done():
		werr = stopGroup(pgid, done)
	}
	code := 0
	if errors.Is(werr, exec.ErrWaitDelay) {
		werr = nil // exited 0, left a pipe open: a grandchild, ended above
	}
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return childResult{}, werr
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	}
	return childResult{Code: code, Line: fmt.Sprintf("%s exited %d", strings.Join(argv, " "), code)}, nil
}

// stopGroup ends process group pgid: SIGTERM, then SIGKILL once the group
// is still alive after killGrace. With done (COMMAND still running) it
// returns COMMAND's wait error; with nil (COMMAND already reaped) it only
// cleans up what COMMAND left behind.
func stopGroup(pgid int, done <-chan error) error {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil && done == nil {
		return nil // the group is gone already
	}
	deadline := time.After(killGrace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var werr error
	waited := done == nil
	for {
		select {
		case werr = <-done:
			waited, done = true, nil
		case <-tick.C:
		case <-deadline:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			if !waited {
				werr = <-done
			}
			return werr
		}
		// Signal 0 probes the group: ESRCH once every member has exited.
		if waited && syscall.Kill(-pgid, 0) != nil {
			return werr
		}
	}
}

// mergeEnv appends extra to base, removing earlier definitions of the same names.
func mergeEnv(base, extra []string) []string {
	names := map[string]bool{}
	for _, e := range extra {
		if k, _, ok := strings.Cut(e, "="); ok {
			names[k] = true
		}
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, e := range base {
		if k, _, ok := strings.Cut(e, "="); ok && names[k] {
			continue
		}
		out = append(out, e)
	}
	return append(out, extra...)
}
