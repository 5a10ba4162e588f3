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

// runChild runs argv with extra environment variables appended (overriding
// earlier ones), stdio passed through, and forwards SIGINT/SIGTERM from ctx
// cancellation as SIGTERM (then SIGKILL after 10 s).
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
	if err := cmd.Start(); err != nil {
		return childResult{}, withCode(ExitUsage, fmt.Errorf("start %s: %w", argv[0], err), "check the command after --")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case werr = <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			werr = <-done
		}
	}
	code := 0
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
