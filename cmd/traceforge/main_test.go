package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/traceforge/traceforge/internal/cli"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"traceforge": func() { os.Exit(cli.Main(os.Args[1:], cli.System())) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script. Extra
// commands:
//
//	exits N PROG ARGS...   run PROG and require exit code N (stdout/stderr kept for later checks)
//	mkset DIR N            write a valid snapshot set of N calls into DIR
//	fixture NAME DIR       copy ../../testdata/NAME/.ai-snapshots to DIR
func TestScripts(t *testing.T) {
	root, _ := filepath.Abs("../../testdata")
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exits N PROG ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				if (got == want) == neg {
					ts.Fatalf("exit code %d, want %d", got, want)
				}
			},
			"mkset": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: mkset DIR N")
				}
				n, _ := strconv.Atoi(args[1])
				if _, err := snapshottest.WriteSet(ts.MkAbs(args[0]), snapshottest.Many(n)...); err != nil {
					ts.Fatalf("mkset: %v", err)
				}
			},
			"fixture": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: fixture NAME DIR")
				}
				src := filepath.Join(root, args[0], ".ai-snapshots")
				ts.Check(os.CopyFS(ts.MkAbs(args[1]), os.DirFS(src)))
			},
		},
	})
}
