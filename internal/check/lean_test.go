package check

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// A lean (Slim) check of a set makes exactly the findings of a full one,
// keeps each file's id, key and hash, and drops the records — except, for a
// snapshot a policy exception applies to, the id and the model the report
// names.
func TestCheckSetSlimIsLeanWithTheSameFindings(t *testing.T) {
	dir := t.TempDir()
	ex := snapshottest.OpenAIChat("policy")
	ex.Request["model"] = "o3-mini"
	ex.Request["temperature"] = 1
	items := append(snapshottest.Many(5), ex)
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	st := &snapshot.Store{Dir: dir}
	full0, err := CheckSet(st, Options{}, nil)
	if err != nil || len(full0.Snapshots) != 6 {
		t.Fatalf("set: %v %d", err, len(full0.Snapshots))
	}
	// Problems for both runs to find: a missing file, a stray file.
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(full0.Snapshots[0].Rel))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openai", "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Exceptions: []Exception{{Model: "o3*", Relax: []string{"temperature", "seed"}}}}
	full, err := CheckSet(st, Options{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := CheckSet(st, Options{Config: cfg, Slim: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Findings) < 3 || !reflect.DeepEqual(full.Findings, lean.Findings) {
		t.Fatalf("findings differ or are too few:\nfull: %v\nlean: %v", full.Findings, lean.Findings)
	}
	if !reflect.DeepEqual(full.Rels, lean.Rels) || !reflect.DeepEqual(full.Manifest, lean.Manifest) || len(full.Snapshots) != len(lean.Snapshots) {
		t.Fatalf("lean set lists other files or another manifest")
	}
	exceptions := 0
	for i, l := range lean.Snapshots {
		f := full.Snapshots[i]
		if l.Rel != f.Rel || l.ID != f.Record.ID || l.ParentID != f.Record.ParentID || l.Turn != f.Record.Turn || l.Key != f.Key || l.FileHash != f.FileHash || l.Errors != f.Errors {
			t.Errorf("%s: lean %+v, full %+v", f.Rel, l, f)
		}
		if f.Exception == nil {
			if l.Record != nil {
				t.Errorf("%s: lean set keeps the record", l.Rel)
			}
			continue
		}
		exceptions++
		if l.Record == nil || l.Record.ID != f.Record.ID || l.Record.Request["model"] != "o3-mini" || len(l.Record.Request) != 1 || l.Record.Response.Body != nil {
			t.Errorf("%s: an exception's lean record must hold its id and model only: %+v", l.Rel, l.Record)
		}
	}
	if exceptions != 1 {
		t.Errorf("%d snapshots with an exception, want 1", exceptions)
	}
}
