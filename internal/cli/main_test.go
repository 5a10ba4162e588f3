package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Exit code 3 is for bugs: an error that is not one of ours, or a panic.
func TestInternalErrorsExit3(t *testing.T) {
	io, _, errOut := testStreams(t, t.TempDir())
	if code := printError(io, errors.New("unexpected state")); code != ExitInternal {
		t.Fatalf("plain error: exit %d, want 3", code)
	}
	if !strings.Contains(errOut.String(), "traceforge: error: unexpected state\ntraceforge: hint: this is a bug; please report it") {
		t.Errorf("stderr = %q", errOut)
	}

	io, out, errOut := testStreams(t, t.TempDir())
	root := NewRootCmd(io)
	root.AddCommand(&cobra.Command{Use: "explode", RunE: func(*cobra.Command, []string) error { panic("boom") }})
	if code := execute(root, []string{"explode"}, io); code != ExitInternal {
		t.Fatalf("panic: exit %d, want 3", code)
	}
	if !strings.HasPrefix(errOut.String(), "traceforge: error: internal error: boom\ntraceforge: hint: this is a bug") || out.Len() != 0 {
		t.Errorf("stderr = %q", errOut)
	}
}

// Usage errors are exit 2 with a hint; the hint names the command's help.
func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"verify", "--bogus"}, {"snapshot", "show"}, {"version", "extra"}} {
		io, _, errOut := testStreams(t, t.TempDir())
		if code := Main(args, io); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
		if !strings.Contains(errOut.String(), "traceforge: hint: ") {
			t.Errorf("%v: no hint in %q", args, errOut)
		}
	}
}
