package migrate

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// setup110 writes a format 1.1.0 set: the 1.0.0 fixture moved by the
// 1.0.0 → 1.1.0 step alone, as traceforge 1.1 left it.
func setup110(t *testing.T) string {
	t.Helper()
	dir := setup100(t)
	in := &Set{Version: snapshot.PreviousVersion, Files: map[string][]byte{}}
	for rel, data := range tree(t, dir, true) {
		in.Files[rel] = []byte(data)
	}
	out, rep, err := recordSteps[snapshot.PreviousVersion].apply(in, Env{Now: testNow, Display: display})
	if err != nil || len(rep.Problems) > 0 || out.Version != Version110 {
		t.Fatalf("1.0.0 → 1.1.0: %v %v", err, rep.Problems)
	}
	for rel, data := range out.Files {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func opts110(dir string, dry bool) Options {
	o := opts(dir, dry)
	o.From = Version110
	return o
}

// records reads every snapshot file's record and version.
func records(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for rel, data := range tree(t, dir, true) {
		if rel == snapshot.ManifestName {
			continue
		}
		v, err := snapshot.Decode([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		doc := v.(map[string]any)
		rec := doc["snapshots"].([]any)[0].(map[string]any)
		rec["_version"], rec["_filehash"] = doc["version"], doc["hash"]
		out[rel] = rec
	}
	return out
}

// TestMigrate110 moves a 1.1.0 set to 1.2.0: same files, ids and records
// (1.2.0 adds optional fields only), version, file and manifest hashes
// rewritten, the set
// verifies, created_at is kept, and a rerun has nothing to do.
func TestMigrate110(t *testing.T) {
	dir := setup110(t)
	before := records(t, dir)
	man0, _ := os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
	res, err := Run(opts110(dir, false))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || len(res.Steps) != 1 || res.Steps[0].From != Version110 || res.Steps[0].To != snapshot.Version || len(res.Remove) != 0 {
		t.Fatalf("result = %+v", res)
	}
	assertValidSet(t, dir)
	after := records(t, dir)
	if len(after) != len(before) || len(after) == 0 {
		t.Fatalf("files %d → %d", len(before), len(after))
	}
	for rel, old := range before {
		cur, ok := after[rel]
		if !ok {
			t.Fatalf("%s is gone", rel)
		}
		// The record (and so its hash) is unchanged; the file hash covers
		// the version and changes.
		if cur["_version"] != snapshot.Version || cur["_filehash"] == old["_filehash"] {
			t.Errorf("%s: version %v, file hash %v (was %v)", rel, cur["_version"], cur["_filehash"], old["_filehash"])
		}
		a, b := maps.Clone(old), maps.Clone(cur)
		for _, m := range []map[string]any{a, b} {
			delete(m, "_version")
			delete(m, "_filehash")
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the record changed", rel)
		}
	}
	man1, _ := os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
	created := func(b []byte) any {
		v, _ := snapshot.Decode(b)
		return v.(map[string]any)["created_at"]
	}
	if created(man0) != created(man1) {
		t.Errorf("created_at %v → %v", created(man0), created(man1))
	}
	res, err = Run(opts110(dir, false))
	if err != nil || !res.NothingToDo {
		t.Fatalf("rerun: %v %+v", err, res)
	}
	// The whole chain from 1.0.0 writes the very same set.
	chained := setup100(t)
	if _, err := Run(opts100(chained, false)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tree(t, chained, true), tree(t, dir, true)) {
		t.Error("1.0.0 → 1.1.0 → 1.2.0 in one run differs from two runs")
	}
}

// TestMigrate110CrashAtEveryStage: interrupted after any write stage, the
// folder verifies or names the version with the migrate hint, and a rerun
// writes exactly the set an uninterrupted run writes.
func TestMigrate110CrashAtEveryStage(t *testing.T) {
	clean := setup110(t)
	if _, err := Run(opts110(clean, false)); err != nil {
		t.Fatal(err)
	}
	want := tree(t, clean, true)
	var stages []string
	afterStage = func(s string) error { stages = append(stages, s); return nil }
	if _, err := Run(opts110(setup110(t), false)); err != nil {
		t.Fatal(err)
	}
	afterStage = nil
	if len(stages) < 4 || stages[0] != "staged" || stages[len(stages)-1] != "committed" {
		t.Fatalf("stages = %v", stages)
	}
	canMigrate := func(v string) bool { return CanMigrate(v, snapshot.Version) }
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			dir := setup110(t)
			afterStage = func(s string) error {
				if s == stage {
					return errCrash
				}
				return nil
			}
			_, err := Run(opts110(dir, false))
			afterStage = nil
			if !errors.Is(err, errCrash) {
				t.Fatalf("err = %v, want the crash", err)
			}
			set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: &check.Config{}, CanMigrate: canMigrate}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range set.Findings {
				if f.Severity == finding.Error && (f.Rule != check.RuleVersion || !strings.Contains(f.Verbatim, "traceforge snapshot migrate --from 1.1.0 --to "+snapshot.Version)) {
					t.Errorf("after %s verify says %s", stage, f.Error())
				}
			}
			res, err := Run(opts110(dir, false))
			if err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if stage == "committed" != res.NothingToDo {
				t.Errorf("rerun after %s: %+v", stage, res)
			}
			assertValidSet(t, dir)
			if got := tree(t, dir, true); !reflect.DeepEqual(got, want) {
				t.Errorf("after crash + rerun the set differs from a clean run")
			}
			if _, err := os.Stat(filepath.Join(dir, StageDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s left behind", StageDir)
			}
		})
	}
}

// TestMigrate110RefusesWhatItCannotHaveWritten: a 1.1.0 record holding a
// 1.2.0 field (resealed by hand), or a changed record, stops the whole
// migration; nothing is written.
func TestMigrate110RefusesWhatItCannotHaveWritten(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(rec map[string]any)
		rule string
	}{
		"defaults_applied in a 1.1.0 record": {func(rec map[string]any) {
			rec["defaults_applied"] = []any{"/temperature"}
			_ = snapshot.Rehash(rec)
		}, check.RuleSchema},
		"occurrence in a 1.1.0 record": {func(rec map[string]any) {
			rec["occurrence"] = int64(1)
			_ = snapshot.Rehash(rec)
		}, check.RuleSchema},
		"an exchange endpoint in a 1.1.0 record": {func(rec map[string]any) {
			rec["endpoint"] = "GET /v1/files"
			_ = snapshot.Rehash(rec)
		}, check.RuleSchema},
		"content edited": {func(rec map[string]any) { rec["response"].(map[string]any)["content"] = "edited" }, check.RuleRecordHash},
	} {
		t.Run(name, func(t *testing.T) {
			dir := setup110(t)
			var rel string
			for r := range tree(t, dir, true) {
				if strings.HasPrefix(r, "openai/") {
					rel = r
				}
			}
			p := filepath.Join(dir, filepath.FromSlash(rel))
			data, _ := os.ReadFile(p)
			v, _ := snapshot.Decode(data)
			doc := v.(map[string]any)
			rec := doc["snapshots"].([]any)[0].(map[string]any)
			c.edit(rec)
			doc["hash"], _ = snapshot.FileHash(Version110, []string{rec["hash"].(string)})
			out, err := snapshot.MarshalFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			before := tree(t, dir, true)
			o := opts110(dir, false)
			o.Now = func() time.Time { return testNow }
			_, err = Run(o)
			var re *RefusedError
			if !errors.As(err, &re) || len(re.Problems) == 0 || re.Problems[0].Rule != c.rule {
				t.Fatalf("err = %v", err)
			}
			if !reflect.DeepEqual(tree(t, dir, true), before) {
				t.Error("a refused migration wrote files")
			}
		})
	}
}

// fixture110 is a format 1.1.0 set for the CLI scripts
// (cmd/traceforge/testdata/script/migrate.txtar): the 1.0.0 fixture moved
// by the 1.0.0 → 1.1.0 step.
var fixture110 = filepath.Join("..", "..", "testdata", "v1.1.0", "mixed", ".ai-snapshots")

// TestFixture110 writes fixture110 (with -update) and otherwise checks that
// it is exactly what the 1.0.0 → 1.1.0 step makes of the 1.0.0 fixture.
func TestFixture110(t *testing.T) {
	dir := setup110(t)
	want := tree(t, dir, true)
	if golden.Update() {
		_ = os.RemoveAll(fixture110)
		for rel, data := range want {
			p := filepath.Join(fixture110, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if got := tree(t, fixture110, true); !reflect.DeepEqual(got, want) {
		t.Errorf("%s is stale: run go test ./internal/migrate -run TestFixture110 -update", fixture110)
	}
}
