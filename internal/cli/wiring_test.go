package cli

import (
	"reflect"
	"testing"
)

// Flags are parsed into each command's options; runF sees them without
// running anything.
func TestCommandFlagsReachRunF(t *testing.T) {
	io, _, _ := testStreams(t, t.TempDir())
	f := &Factory{IO: io, Dir: "snaps"}
	var got *verifyOptions
	cmd := newVerifyCmd(f, func(o *verifyOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--format", "json", "--fail-on-unused", "--allow-host", "a,b", "--", "npm", "test"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Format != "json" || !got.FailOnUnused || !reflect.DeepEqual(got.AllowHosts, []string{"a", "b"}) ||
		!reflect.DeepEqual(got.Command, []string{"npm", "test"}) || got.Factory != f || !got.changed["fail-on-unused"] {
		t.Errorf("verify options = %+v", got)
	}

	var rec *recordOptions
	cmd = newRecordCmd(f, func(o *recordOptions) error { rec = o; return nil })
	cmd.SetArgs([]string{"--listen", "127.0.0.1:9999", "--only-missing", "--", "go", "test"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Listen != "127.0.0.1:9999" || !rec.listenSet || !rec.OnlyMissing || !reflect.DeepEqual(rec.Command, []string{"go", "test"}) {
		t.Errorf("record options = %+v", rec)
	}

	var mig *migrateOptions
	cmd = newSnapshotMigrateCmd(f, func(o *migrateOptions) error { mig = o; return nil })
	cmd.SetArgs([]string{"--from", "0.9.0", "--to", "1.0.0", "--dry-run"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if mig == nil || mig.From != "0.9.0" || mig.To != "1.0.0" || !mig.DryRun {
		t.Errorf("migrate options = %+v", mig)
	}
}

// The root command wires every command explicitly.
func TestRootHasEveryCommand(t *testing.T) {
	io, _, _ := testStreams(t, t.TempDir())
	var names []string
	for _, c := range NewRootCmd(io).Commands() {
		names = append(names, c.Name())
		if c.Name() == "snapshot" {
			for _, s := range c.Commands() {
				names = append(names, "snapshot "+s.Name())
			}
		}
	}
	want := []string{"diff", "init", "record", "snapshot", "snapshot list", "snapshot merge-manifest", "snapshot migrate", "snapshot reindex", "snapshot show", "snapshot stats", "snapshot tree", "verify", "version"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("commands = %q, want %q", names, want)
	}
}
