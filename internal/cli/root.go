// Package cli holds traceforge's commands: flags are parsed into one options
// struct per command, and each command's run function calls into internal/
// packages. Only Main turns errors into exit codes and prints them.
package cli

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version is stamped by the Makefile (-ldflags -X); otherwise build info is used.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			return "devel-" + rev + dirty
		}
	}
	return "devel"
}

// NewRootCmd builds the command tree.
func NewRootCmd(io *IOStreams) *cobra.Command {
	f := &Factory{IO: io}
	root := &cobra.Command{
		Use:   "traceforge",
		Short: "Snapshot testing for LLM behaviour",
		Long: `traceforge records your application's LLM calls into strictly validated,
hashed JSON snapshots and verifies them offline in CI.

  traceforge record -- go test ./...     record every call the tests make
  traceforge verify                      check every snapshot and hash
  traceforge verify -- go test ./...     replay the snapshots to the tests, no network`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetIn(io.In)
	root.PersistentFlags().StringVar(&f.Dir, "dir", "", "snapshot folder (default ./.ai-snapshots; its parent is the project root)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err, Hint: fmt.Sprintf("run '%s --help' for usage", c.CommandPath())}
	})
	root.AddCommand(newRecordCmd(f, nil))
	root.AddCommand(newSnapshotCmd(f))
	root.AddCommand(newVerifyCmd(f, nil))
	root.AddCommand(newDiffCmd(f, nil))
	root.AddCommand(newInitCmd(f, nil))
	root.AddCommand(newVersionCmd(io))
	return root
}

func newVersionCmd(io *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the traceforge version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(io.Out, "traceforge %s\n", version())
			return nil
		},
	}
}

// Main runs traceforge with args and returns the exit code. It is the only
// place that prints errors.
func Main(args []string, io *IOStreams) int {
	return execute(NewRootCmd(io), args, io)
}

// execute runs root with args and returns the exit code, printing the error.
func execute(root *cobra.Command, args []string, io *IOStreams) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(io.ErrOut, "traceforge: error: internal error: %v\n", r)
			fmt.Fprintf(io.ErrOut, "traceforge: hint: this is a bug; please report it with the command you ran\n%s", debug.Stack())
			code = ExitInternal
		}
	}()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	return printError(io, err)
}

func printError(io *IOStreams, err error) int {
	code := ExitInternal
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
		if ee.Silent {
			return code
		}
	} else if isCobraUsage(err) {
		code = ExitUsage
	}
	msg := err.Error()
	fmt.Fprintf(io.ErrOut, "traceforge: error: %s\n", msg)
	hint := hintOf(err)
	if hint == "" && code == ExitUsage {
		hint = "run 'traceforge --help' for usage"
	}
	if hint == "" && code == ExitInternal {
		hint = "this is a bug; please report it with the command you ran"
	}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			fmt.Fprintf(io.ErrOut, "traceforge: hint: %s\n", h)
		}
	}
	return code
}

// isCobraUsage recognises cobra's own argument errors (unknown command, wrong arg count).
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
