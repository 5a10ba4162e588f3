package cli

import (
	"reflect"
	"testing"
)

// Flags parse into the options structs (the runF hook stops before any work).
func TestTeamCommandFlags(t *testing.T) {
	io, _, _ := testStreams(t, t.TempDir())
	g := &Factory{IO: io}

	var d *diffOptions
	cmd := newDiffCmd(g, func(o *diffOptions) error { d = o; return nil })
	cmd.SetArgs([]string{"origin/main", "--format", "markdown", "--output", "r.md", "--check"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if d.Rev != "origin/main" || d.Format != "markdown" || d.Output != "r.md" || !d.Check {
		t.Errorf("diff options = %+v", d)
	}
	cmd = newDiffCmd(g, func(o *diffOptions) error { d = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || d.Rev != "HEAD" || d.Format != "text" || d.Check {
		t.Errorf("diff defaults = %+v %v", d, err)
	}

	var in *initOptions
	cmd = newInitCmd(g, func(o *initOptions) error { in = o; return nil })
	cmd.SetArgs([]string{"--ci", "github", "--force"})
	if err := cmd.Execute(); err != nil || in.CI != "github" || !in.Force {
		t.Errorf("init options = %+v %v", in, err)
	}

	var m *mergeManifestOptions
	cmd = newSnapshotMergeManifestCmd(g, func(o *mergeManifestOptions) error { m = o; return nil })
	cmd.SetArgs([]string{"b.json", "o.json", "t.json"})
	if err := cmd.Execute(); err != nil || !reflect.DeepEqual([]string{m.Base, m.Ours, m.Theirs}, []string{"b.json", "o.json", "t.json"}) {
		t.Errorf("merge-manifest options = %+v %v", m, err)
	}
}

// The commands are registered: init and diff at the top, merge-manifest under snapshot.
func TestTeamCommandsRegistered(t *testing.T) {
	io, _, _ := testStreams(t, t.TempDir())
	root := NewRootCmd(io)
	for _, path := range [][]string{{"init"}, {"diff"}, {"snapshot", "merge-manifest"}} {
		c, _, err := root.Find(path)
		if err != nil || c.Name() != path[len(path)-1] {
			t.Errorf("%v: %v %v", path, c, err)
		}
	}
}
