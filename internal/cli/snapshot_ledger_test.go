package cli

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// Flags land in the options struct (the runF hook stops before any work).
func TestSnapshotStatsAndTreeFlags(t *testing.T) {
	io, _, _ := testStreams(t, t.TempDir())
	g := &Factory{IO: io}
	var so *statsOptions
	cmd := newSnapshotStatsCmd(g, func(o *statsOptions) error { so = o; return nil })
	cmd.SetArgs([]string{"--by", "source", "--format", "json"})
	if err := cmd.Execute(); err != nil || so.By != "source" || so.Format != "json" {
		t.Fatalf("stats: %v %+v", err, so)
	}
	cmd = newSnapshotStatsCmd(g, func(o *statsOptions) error { so = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || so.By != "model" || so.Format != "text" {
		t.Fatalf("stats defaults: %v %+v", err, so)
	}
	var to *treeOptions
	cmd = newSnapshotTreeCmd(g, func(o *treeOptions) error { to = o; return nil })
	cmd.SetArgs([]string{"openai/0123456789ab.json", "--format", "json"})
	if err := cmd.Execute(); err != nil || to.ID != "openai/0123456789ab.json" || to.Format != "json" {
		t.Fatalf("tree: %v %+v", err, to)
	}
}

// Everything stats and tree print passes through the redaction: a key in a
// source function name never reaches stdout.
func TestSnapshotStatsRedacts(t *testing.T) {
	root := t.TempDir()
	it := snapshottest.OpenAIChat("hello")
	it.Source.Function = "Bearer abcdefghijklmnopqrstuvwxyz012345"
	if _, err := snapshottest.WriteSet(root+"/"+project.DefaultDir, it); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"snapshot", "stats", "--by", "source"}, {"snapshot", "tree", "--format", "json"}} {
		io, out, errOut := testStreams(t, root)
		if code := Main(args, io); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.Contains(out.String(), "abcdefghijklmnopqrstuvwxyz012345") || !strings.Contains(out.String(), "[REDACTED:bearer-token]") {
			t.Errorf("%v: not redacted:\n%s", args, out)
		}
	}
}
