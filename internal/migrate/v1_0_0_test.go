package migrate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// v100Dir holds a format 1.0.0 set (written by traceforge 1.0) and, under
// want/, the current-version set its migration must produce (-update rewrites it).
var v100Dir = filepath.Join("..", "..", "testdata", "v1.0.0", "mixed")

// setup100 copies the 1.0.0 fixture set into a fresh snapshot folder.
func setup100(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	for rel, data := range tree(t, filepath.Join(v100Dir, ".ai-snapshots"), false) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func opts100(dir string, dry bool) Options {
	o := opts(dir, dry)
	o.From = snapshot.PreviousVersion
	return o
}

// TestMigrate100 moves a 1.0.0 set to the current version (through 1.1.0): same files and ids, each record
// gets the endpoint of the 1.0.0 rule, every hash is recomputed, the set
// verifies, created_at is kept, and a rerun has nothing to do.
func TestMigrate100(t *testing.T) {
	dir := setup100(t)
	before := tree(t, dir, true)
	res, err := Run(opts100(dir, false))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || len(res.Remove) != 0 || res.Write[len(res.Write)-1] != snapshot.ManifestName {
		t.Fatalf("result = %+v", res)
	}
	assertValidSet(t, dir)
	got := tree(t, dir, true)
	if !reflect.DeepEqual(keys(got), keys(before)) {
		t.Fatalf("files %v, want the same names as before %v (ids never change)", keys(got), keys(before))
	}
	wantEndpoint := map[string]string{"anthropic/83aa6a672c3c.json": "/v1/messages", "openai/deda915f4b14.json": "/v1/chat/completions"}
	for rel, e := range wantEndpoint {
		v, err := snapshot.Decode([]byte(got[rel]))
		if err != nil {
			t.Fatal(err)
		}
		doc := v.(map[string]any)
		rec := doc["snapshots"].([]any)[0].(map[string]any)
		if doc["version"] != snapshot.Version || rec["endpoint"] != e {
			t.Errorf("%s: version %v endpoint %v, want %s %s", rel, doc["version"], rec["endpoint"], snapshot.Version, e)
		}
		if got[rel] == before[rel] {
			t.Errorf("%s unchanged", rel)
		}
	}
	m, _ := snapshot.Decode([]byte(got[snapshot.ManifestName]))
	if man := snapshot.ManifestFromValue(m.(map[string]any)); man.CreatedAt != "2026-01-09T10:30:00Z" || man.Version != snapshot.Version {
		t.Errorf("manifest %+v: created_at must be kept", man)
	}

	assertTree(t, got, filepath.Join(v100Dir, "want"))

	res2, err := Run(opts100(dir, false))
	if err != nil || !res2.NothingToDo {
		t.Errorf("rerun: %+v %v", res2, err)
	}
	if after := tree(t, dir, true); !reflect.DeepEqual(after, got) {
		t.Error("rerun changed the set")
	}
}

// TestChain090To110: --from 0.9.0 --to the current version runs every step,
// in order, and the result verifies (the dry-run goldens of testdata/legacy
// show them).
func TestChain090To110(t *testing.T) {
	dir := setup(t, "mixed-providers")
	res, err := Run(opts(dir, false))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 || res.Steps[0].To != "1.0.0" || res.Steps[1].From != "1.0.0" || res.Steps[1].To != Version110 ||
		res.Steps[2].From != Version110 || res.Steps[2].To != snapshot.Version {
		t.Fatalf("steps = %+v", res.Steps)
	}
	assertValidSet(t, dir)
}

func TestMigrate100DryRunGolden(t *testing.T) {
	dir := setup100(t)
	before := tree(t, dir, false)
	res, err := Run(opts100(dir, true))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	render.Migrate(&b, res)
	golden.Assert(t, filepath.Join(v100Dir, "dry-run.golden"), b.String())
	if after := tree(t, dir, false); !reflect.DeepEqual(before, after) {
		t.Error("dry run wrote files")
	}
}

// TestMigrate100Refuses: a record edited after hashing, a file that is not
// the one the manifest lists, and a manifest entry without its file stop the
// migration with nothing written.
func TestMigrate100Refuses(t *testing.T) {
	const rel = "openai/deda915f4b14.json"
	edit := func(t *testing.T, dir string, fn func(doc, rec map[string]any)) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, _ := os.ReadFile(p)
		v, err := snapshot.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		doc := v.(map[string]any)
		fn(doc, doc["snapshots"].([]any)[0].(map[string]any))
		out, err := snapshot.MarshalFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		change func(t *testing.T, dir string)
		rule   string
	}{
		"content edited": {func(t *testing.T, dir string) {
			edit(t, dir, func(_, rec map[string]any) { rec["response"].(map[string]any)["content"] = "edited" })
		}, check.RuleRecordHash},
		"resealed file the manifest does not list": {func(t *testing.T, dir string) {
			edit(t, dir, func(doc, rec map[string]any) {
				rec["response"].(map[string]any)["content"] = "edited"
				if err := snapshot.Rehash(rec); err != nil {
					t.Fatal(err)
				}
				doc["hash"], _ = snapshot.FileHash("1.0.0", []string{rec["hash"].(string)})
			})
		}, RuleManifest100},
		"file missing": {func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				t.Fatal(err)
			}
		}, check.RuleManifestEntry},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := setup100(t)
			c.change(t, dir)
			before := tree(t, dir, true)
			_, err := Run(opts100(dir, false))
			var re *RefusedError
			if !errors.As(err, &re) || re.Written {
				t.Fatalf("err = %v, want a refusal before writing", err)
			}
			if got := rulesOf(re.Problems); !reflect.DeepEqual(got, []string{c.rule}) {
				t.Errorf("rules = %v, want [%s]: %v", got, c.rule, re.Problems)
			}
			for _, p := range re.Problems {
				if p.File == "" || p.Fix == "" {
					t.Errorf("problem without file or fix: %+v", p)
				}
			}
			if after := tree(t, dir, true); !reflect.DeepEqual(before, after) {
				t.Error("a refused migration wrote files")
			}
			if _, err := os.Stat(filepath.Join(dir, StageDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Error("stage folder created")
			}
		})
	}
}

// TestMigrate100CrashAtEveryStage interrupts the 1.0.0 → current migration
// after each write stage: verify then passes or names the version with the
// migrate hint (never a silent mix), and a rerun finishes with exactly the
// set an uninterrupted run writes.
func TestMigrate100CrashAtEveryStage(t *testing.T) {
	clean := setup100(t)
	if _, err := Run(opts100(clean, false)); err != nil {
		t.Fatal(err)
	}
	want := tree(t, clean, true)
	var stages []string
	afterStage = func(s string) error { stages = append(stages, s); return nil }
	if _, err := Run(opts100(setup100(t), false)); err != nil {
		t.Fatal(err)
	}
	afterStage = nil
	if len(stages) < 4 || stages[0] != "staged" || stages[len(stages)-1] != "committed" {
		t.Fatalf("stages = %v", stages)
	}
	canMigrate := func(v string) bool { return CanMigrate(v, snapshot.Version) }
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			dir := setup100(t)
			afterStage = func(s string) error {
				if s == stage {
					return errCrash
				}
				return nil
			}
			_, err := Run(opts100(dir, false))
			afterStage = nil
			if !errors.Is(err, errCrash) {
				t.Fatalf("err = %v, want the crash", err)
			}
			set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: &check.Config{}, CanMigrate: canMigrate}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range set.Findings {
				if f.Severity != finding.Error {
					continue
				}
				if f.Rule != check.RuleVersion || !strings.Contains(f.Verbatim, "traceforge snapshot migrate --from 1.0.0 --to "+snapshot.Version) {
					t.Errorf("after %s verify says %s", stage, f.Error())
				}
			}
			res, err := Run(opts100(dir, false))
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

// TestVersion100Message: verify on a 1.0.0 set prints the §8 text naming
// --from 1.0.0 --to the current version.
func TestVersion100Message(t *testing.T) {
	dir := setup100(t)
	canMigrate := func(v string) bool { return CanMigrate(v, snapshot.Version) }
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: &check.Config{}, CanMigrate: canMigrate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "❌ Snapshot version 1.0.0 is no longer supported\n   Current version: " + snapshot.Version + "\n   Re-record all snapshots (or run: traceforge snapshot migrate --from 1.0.0 --to " + snapshot.Version + ")"
	n := 0
	for _, f := range set.Findings {
		if f.Rule == check.RuleVersion {
			n++
			if f.Verbatim != want {
				t.Errorf("verbatim = %q, want %q", f.Verbatim, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no version finding on a 1.0.0 set")
	}
}

// FuzzUpgradeFile: any bytes given as a 1.0.0 snapshot file either upgrade
// to a file of the current version that keeps the record's id, or are
// refused with a rule — never a panic.
func FuzzUpgradeFile(f *testing.F) {
	for _, name := range []string{"openai/deda915f4b14.json", "anthropic/83aa6a672c3c.json"} {
		b, err := os.ReadFile(filepath.Join(v100Dir, ".ai-snapshots", filepath.FromSlash(name)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"version":"1.0.0","snapshots":[{"hash":"x"}],"hash":"y"}`)
	f.Fuzz(func(t *testing.T, data string) {
		out, hash100, uerr := upgradeFile("openai", []byte(data))
		if uerr != nil {
			if uerr.rule == "" || uerr.msg == "" {
				t.Fatalf("refusal without rule or message: %+v", uerr)
			}
			return
		}
		v, err := snapshot.Decode(out)
		if err != nil {
			t.Fatalf("upgraded bytes do not decode: %v", err)
		}
		doc := v.(map[string]any)
		rec := doc["snapshots"].([]any)[0].(map[string]any)
		in, _ := snapshot.Decode([]byte(data))
		if doc["version"] != snapshot.Version || rec["id"] != in.(map[string]any)["snapshots"].([]any)[0].(map[string]any)["id"] || !strings.HasPrefix(hash100, "sha256:") {
			t.Fatalf("upgrade changed the id or version: %v", doc)
		}
	})
}
