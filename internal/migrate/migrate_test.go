package migrate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/verify"
)

func snapshotSet(dir string) ([]snapshot.ManifestEntry, error) {
	return snapshottest.WriteSet(dir, snapshottest.OpenAIChat("a set that is not part of the migration"))
}

var testNow = time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)

const display = ".ai-snapshots"

// setup copies a fixture's snapshots.json into a fresh snapshot folder.
func setup(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(legacyDir, name, LegacyFile))
	if err != nil {
		t.Fatalf("%v (run: go test ./internal/migrate -update)", err)
	}
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LegacyFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func opts(dir string, dry bool) Options {
	return Options{Dir: dir, Display: display, From: "0.9.0", To: snapshot.Version, DryRun: dry,
		Check: check.Options{Config: &check.Config{}, CanMigrate: func(v string) bool { return CanMigrate(v, snapshot.Version) }},
		Now:   func() time.Time { return testNow }}
}

// tree returns every file below dir (slash paths → content), hidden ones
// included unless skipHidden.
func tree(t *testing.T, dir string, skipHidden bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if skipHidden && strings.HasPrefix(d.Name(), ".") && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func rulesOf(ps finding.Findings) []string {
	var rs []string
	for _, p := range ps {
		rs = append(rs, p.Rule)
	}
	sort.Strings(rs)
	return rs
}

func TestRegistryPaths(t *testing.T) {
	if got := Default().Supported(); !reflect.DeepEqual(got, []string{"0.9.0 → 1.0.0", "0.9.0 → 1.1.0", "0.9.0 → 1.2.0", "1.0.0 → 1.1.0", "1.0.0 → 1.2.0", "1.1.0 → 1.2.0"}) {
		t.Errorf("Supported() = %v", got)
	}
	if !CanMigrate("0.9.0", "1.2.0") || !CanMigrate("1.0.0", "1.2.0") || !CanMigrate("1.1.0", "1.2.0") || CanMigrate("0.8.0", "1.2.0") || CanMigrate("1.2.0", "1.2.0") {
		t.Error("CanMigrate answers wrongly")
	}
	_, err := Default().Path("0.8.0", "1.1.0")
	var npe *NoPathError
	if !errors.As(err, &npe) || !errors.Is(err, ErrNoPath) {
		t.Fatalf("Path(0.8.0) error = %v", err)
	}
	if want := "no migration path from 0.8.0 to 1.1.0 (supported: 0.9.0 → 1.0.0, 0.9.0 → 1.1.0, 0.9.0 → 1.2.0, 1.0.0 → 1.1.0, 1.0.0 → 1.2.0, 1.1.0 → 1.2.0)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}

	// A future step is one registration; chains are found through it.
	r := NewRegistry()
	noop := func(in *Set, env Env) (*Set, *result.MigrateStep, error) { return in, &result.MigrateStep{}, nil }
	r.Register(Step{From: "1.0.0", To: "1.1.0", Apply: noop})
	r.Register(Step{From: "0.9.0", To: "1.0.0", Apply: noop})
	r.Register(Step{From: "1.1.0", To: "2.0.0", Apply: noop})
	chain, err := r.Path("0.9.0", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	var hops []string
	for _, s := range chain {
		hops = append(hops, s.From+">"+s.To)
	}
	if want := []string{"0.9.0>1.0.0", "1.0.0>1.1.0", "1.1.0>2.0.0"}; !reflect.DeepEqual(hops, want) {
		t.Errorf("chain = %v, want %v", hops, want)
	}
	want := []string{"0.9.0 → 1.0.0", "0.9.0 → 1.1.0", "0.9.0 → 2.0.0", "1.0.0 → 1.1.0", "1.0.0 → 2.0.0", "1.1.0 → 2.0.0"}
	if got := r.Supported(); !reflect.DeepEqual(got, want) {
		t.Errorf("Supported() = %v", got)
	}
	if _, err := r.Path("2.0.0", "0.9.0"); err == nil {
		t.Error("downgrade path found")
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	r.Register(Step{From: "1.0.0", To: "1.1.0", Apply: noop})
}

// TestChainThroughFutureStep runs a three-step chain end to end through Run:
// a pretend 0.8.0 → 0.9.0 step registered in front of the real 0.9.0 →
// 1.0.0 → 1.1.0 → 1.2.0 steps.
func TestChainThroughFutureStep(t *testing.T) {
	r := NewRegistry()
	legacy := defaultRegistry.steps[[2]string{"0.9.0", "1.0.0"}]
	r.Register(defaultRegistry.steps[[2]string{"1.0.0", "1.1.0"}])
	r.Register(defaultRegistry.steps[[2]string{"1.1.0", "1.2.0"}])
	var seen []string
	r.Register(Step{From: "0.8.0", To: "0.9.0", Apply: func(in *Set, env Env) (*Set, *result.MigrateStep, error) {
		seen = append(seen, "0.8.0→0.9.0")
		out := &Set{Version: "0.9.0", Files: map[string][]byte{}}
		for k, v := range in.Files {
			out.Files[k] = bytes.Replace(v, []byte(`"version": "0.8.0"`), []byte(`"version": "0.9.0"`), 1)
		}
		return out, &result.MigrateStep{From: "0.8.0", To: "0.9.0", Summary: "version bump"}, nil
	}})
	r.Register(legacy)
	dir := setup(t, "valid-openai")
	p := filepath.Join(dir, LegacyFile)
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, bytes.Replace(b, []byte(`"version": "0.9.0"`), []byte(`"version": "0.8.0"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	o := opts(dir, false)
	o.From, o.Registry = "0.8.0", r
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || len(res.Steps) != 4 || len(seen) != 1 {
		t.Fatalf("done=%v steps=%d seen=%v", res.Done, len(res.Steps), seen)
	}
	assertValidSet(t, dir)
}

func assertValidSet(t *testing.T, dir string) {
	t.Helper()
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: &check.Config{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			t.Errorf("CheckSet: %s", f.Error())
		}
	}
	rep, _, err := verify.Static(verify.StaticOptions{Dir: dir, Display: display, Config: &check.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		var b bytes.Buffer
		_ = render.Verify(&b, rep, "text", false)
		t.Errorf("verify.Static failed:\n%s", b.String())
	}
	if _, err := os.Stat(filepath.Join(dir, LegacyFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("snapshots.json still present: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, StageDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left behind: %v", StageDir, err)
	}
}

func TestDryRunGolden(t *testing.T) {
	for _, f := range legacyFixtures() {
		t.Run(f.name, func(t *testing.T) {
			dir := setup(t, f.name)
			before := tree(t, dir, false)
			res, err := Run(opts(dir, true))
			if err != nil && !errors.Is(err, ErrRefused) {
				t.Fatal(err)
			}
			if res == nil {
				t.Fatalf("no plan: %v", err)
			}
			var b bytes.Buffer
			render.Migrate(&b, res)
			golden.Assert(t, filepath.Join(legacyDir, f.name, "dry-run.golden"), b.String())
			if after := tree(t, dir, false); !reflect.DeepEqual(before, after) {
				t.Errorf("dry run wrote files: %v → %v", keys(before), keys(after))
			}
		})
	}
}

// validFixtures migrate; the rest are refused with these rules.
var validFixtures = []string{"valid-openai", "valid-anthropic", "mixed-providers", "duplicate-equal"}

var refusedFixtures = map[string][]string{
	"tampered":           {RuleTampered},
	"missing-function":   {RuleMissingFunction, RuleMissingFunction},
	"duplicate-conflict": {RuleConflict},
	"tool-call-finish":   {RuleToolCall, RuleToolCall},
	"unknown-provider":   {RuleProvider},
	"policy-violation":   {check.RuleDeterminism, check.RuleDeterminism},
	"many-problems":      {check.RuleDeterminism, check.RuleDeterminism, RuleMissingFunction, RuleTampered, RuleToolCall, RuleProvider},
}

func TestEveryFixtureIsClassified(t *testing.T) {
	n := 0
	for _, f := range legacyFixtures() {
		_, refused := refusedFixtures[f.name]
		valid := false
		for _, v := range validFixtures {
			valid = valid || v == f.name
		}
		if refused == valid {
			t.Errorf("fixture %s must be either valid or refused", f.name)
		}
		n++
	}
	if n != len(validFixtures)+len(refusedFixtures) {
		t.Errorf("%d fixtures, %d classified", n, len(validFixtures)+len(refusedFixtures))
	}
}

func TestMigrateValid(t *testing.T) {
	for _, name := range validFixtures {
		t.Run(name, func(t *testing.T) {
			dir := setup(t, name)
			res, err := Run(opts(dir, false))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Done || len(res.Remove) != 1 || res.Remove[0] != LegacyFile || res.Write[len(res.Write)-1] != snapshot.ManifestName {
				t.Fatalf("result = %+v", res)
			}
			assertValidSet(t, dir)

			// The migrated set is pinned byte for byte.
			got := tree(t, dir, true)
			assertTree(t, got, filepath.Join(legacyDir, name, "want"))

			// A rerun has nothing to do and changes nothing.
			res2, err := Run(opts(dir, false))
			if err != nil {
				t.Fatal(err)
			}
			if !res2.NothingToDo {
				t.Errorf("rerun: %+v", res2)
			}
			var b bytes.Buffer
			render.Migrate(&b, res2)
			if want := "Nothing to do: .ai-snapshots is already at format " + snapshot.Version + ".\n"; b.String() != want {
				t.Errorf("rerun says %q", b.String())
			}
			if after := tree(t, dir, true); !reflect.DeepEqual(after, got) {
				t.Error("rerun changed the set")
			}
		})
	}
}

func TestMergeKeepsEarliest(t *testing.T) {
	dir := setup(t, "duplicate-equal")
	res, err := Run(opts(dir, false))
	if err != nil {
		t.Fatal(err)
	}
	set, _ := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if len(set.Snapshots) != 2 {
		t.Fatalf("%d snapshots, want 2 (one merged)", len(set.Snapshots))
	}
	for _, s := range set.Snapshots {
		if s.Provider != "openai" {
			continue
		}
		r := s.Record
		if r.Timestamp != "2026-01-09T10:30:00Z" || r.Response.LatencyMS != 450 || r.Source.Line != 12 {
			t.Errorf("merged record = %s %d %s; want the earliest record", r.Timestamp, r.Response.LatencyMS, r.Source)
		}
	}
	if !strings.Contains(res.Steps[0].Items[0].Note, `merged into #2 "sum-early"`) {
		t.Errorf("items = %+v", res.Steps[0].Items)
	}
}

func TestRefusedWritesNothing(t *testing.T) {
	for name, want := range refusedFixtures {
		t.Run(name, func(t *testing.T) {
			dir := setup(t, name)
			before := tree(t, dir, true)
			res, err := Run(opts(dir, false))
			var re *RefusedError
			if !errors.As(err, &re) || re.Written {
				t.Fatalf("err = %v, want a refusal before writing", err)
			}
			sort.Strings(want)
			if got := rulesOf(re.Problems); !reflect.DeepEqual(got, want) {
				t.Errorf("rules = %v, want %v\n%v", got, want, re.Problems)
			}
			if res == nil || res.Done {
				t.Error("refused migration reports done")
			}
			if after := tree(t, dir, true); !reflect.DeepEqual(before, after) {
				t.Errorf("refused migration wrote files: %v", keys(after))
			}
			if _, err := os.Stat(filepath.Join(dir, StageDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Error("stage folder created")
			}
			for _, p := range re.Problems {
				if p.Fix == "" || p.Message == "" || p.File == "" || strings.HasPrefix(p.File, display) {
					t.Errorf("incomplete problem %+v", p)
				}
			}
		})
	}
}

func TestTamperedNamesRecord(t *testing.T) {
	dir := setup(t, "tampered")
	_, err := Run(opts(dir, false))
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Problems) != 1 {
		t.Fatalf("err = %v", err)
	}
	p := re.Problems[0]
	if p.Subject != `#1 "ask-1"` || p.Pointer != "/snapshots/1/hash" || !strings.Contains(p.Message, "record hash mismatch") {
		t.Errorf("problem = %+v", p)
	}
}

// crashStages are the points where a crash is injected, in write order.
func crashStages(t *testing.T, name string) []string {
	t.Helper()
	var stages []string
	afterStage = func(s string) error { stages = append(stages, s); return nil }
	defer func() { afterStage = nil }()
	dir := setup(t, name)
	if _, err := Run(opts(dir, false)); err != nil {
		t.Fatal(err)
	}
	return stages
}

var errCrash = errors.New("simulated crash")

// TestCrashAtEveryStage interrupts the migration after each write stage and
// proves the folder then holds the old set, the new set, or an unfinished
// migration that verify names — never a silent mix — and that a rerun
// finishes with exactly the set an uninterrupted run writes.
func TestCrashAtEveryStage(t *testing.T) {
	for _, name := range []string{"mixed-providers", "duplicate-equal"} {
		clean := setup(t, name)
		if _, err := Run(opts(clean, false)); err != nil {
			t.Fatal(err)
		}
		want := tree(t, clean, true)
		stages := crashStages(t, name)
		if len(stages) < 4 || stages[0] != "staged" || stages[len(stages)-1] != "removed "+LegacyFile {
			t.Fatalf("stages = %v", stages)
		}
		for _, stage := range stages {
			t.Run(name+"/"+stage, func(t *testing.T) {
				dir := setup(t, name)
				afterStage = func(s string) error {
					if s == stage {
						return errCrash
					}
					return nil
				}
				_, err := Run(opts(dir, false))
				afterStage = nil
				if !errors.Is(err, errCrash) {
					t.Fatalf("err = %v, want the crash", err)
				}
				state := classify(t, dir)
				switch {
				case stage == "staged":
					if state != "old" {
						t.Errorf("after %s the folder is %s, want the old set", stage, state)
					}
				case strings.HasPrefix(stage, "renamed "):
					if state != "old" && state != "unfinished" {
						t.Errorf("after %s the folder is %s", stage, state)
					}
				case stage == "committed":
					if state != "unfinished" {
						t.Errorf("after %s the folder is %s, want an unfinished migration", stage, state)
					}
				default:
					if state != "new" {
						t.Errorf("after %s the folder is %s, want the new set", stage, state)
					}
				}
				res, err := Run(opts(dir, false))
				if err != nil {
					t.Fatalf("rerun: %v", err)
				}
				if stage == "removed "+LegacyFile {
					if !res.NothingToDo {
						t.Errorf("rerun after the last stage: %+v", res)
					}
				} else if !res.Done {
					t.Errorf("rerun did not finish: %+v", res)
				}
				assertValidSet(t, dir)
				if got := tree(t, dir, true); !reflect.DeepEqual(got, want) {
					t.Errorf("after crash + rerun the set differs from a clean run: %v vs %v", keys(got), keys(want))
				}
			})
		}
	}
}

// classify says what verify sees: "old" (a 0.9.0 set: the version message
// with the migrate hint), "new" (passes), or "unfinished" (verify names the
// unfinished migration). Anything else fails the test.
func classify(t *testing.T, dir string) string {
	t.Helper()
	canMigrate := func(v string) bool { return CanMigrate(v, snapshot.Version) }
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: &check.Config{}, CanMigrate: canMigrate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if set.Valid() {
		return "new"
	}
	var rules []string
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			rules = append(rules, f.Rule)
			if f.Rule == check.RuleVersion && !strings.Contains(f.Verbatim, "traceforge snapshot migrate --from 0.9.0 --to "+snapshot.Version) {
				t.Errorf("version finding without the migrate hint: %q", f.Verbatim)
			}
		}
	}
	if reflect.DeepEqual(rules, []string{check.RuleVersion}) {
		return "old"
	}
	for _, r := range rules {
		// Files renamed in without a manifest yet (verify: the 0.9.0 version
		// message with the migrate hint, plus the missing manifest), or a
		// manifest next to snapshots.json ("unfinished migration").
		if r == check.RuleMigration || r == check.RuleVersion {
			return "unfinished"
		}
	}
	t.Errorf("folder is a silent mix: %v", set.Findings)
	return "mix"
}

func TestRerunAfterReindexOfPartialSet(t *testing.T) {
	// Crash after the first file was renamed in, then the user follows
	// verify's other hint (reindex) before rerunning migrate.
	stages := crashStages(t, "mixed-providers")
	dir := setup(t, "mixed-providers")
	afterStage = func(s string) error {
		if s == stages[1] {
			return errCrash
		}
		return nil
	}
	_, err := Run(opts(dir, false))
	afterStage = nil
	if !errors.Is(err, errCrash) {
		t.Fatal(err)
	}
	if _, err := check.Reindex(&snapshot.Store{Dir: dir}, check.Options{}, testNow); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(opts(dir, false)); err != nil {
		t.Fatalf("rerun after reindex: %v", err)
	}
	assertValidSet(t, dir)
}

func TestFolderStates(t *testing.T) {
	t.Run("missing folder", func(t *testing.T) {
		_, err := Run(opts(filepath.Join(t.TempDir(), "nope"), false))
		if !errors.Is(err, ErrNoFolder) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("empty folder", func(t *testing.T) {
		_, err := Run(opts(t.TempDir(), false))
		if !errors.Is(err, ErrNoSet) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("wrong from", func(t *testing.T) {
		dir := setup(t, "valid-openai")
		p := filepath.Join(dir, LegacyFile)
		b, _ := os.ReadFile(p)
		_ = os.WriteFile(p, bytes.Replace(b, []byte(`"0.9.0"`), []byte(`"0.8.0"`), 1), 0o644)
		_, err := Run(opts(dir, false))
		if !errors.Is(err, ErrVersionMismatch) || !strings.Contains(err.Error(), "format 0.8.0, not 0.9.0") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown pair", func(t *testing.T) {
		o := opts(t.TempDir(), false)
		o.To = "2.0.0"
		_, err := Run(o)
		if !errors.Is(err, ErrNoPath) || !strings.Contains(err.Error(), "supported: 0.9.0 → 1.0.0") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("locked", func(t *testing.T) {
		dir := setup(t, "valid-openai")
		unlock, err := (&snapshot.Store{Dir: dir}).Lock()
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if _, err := Run(opts(dir, false)); !errors.Is(err, ErrLocked) {
			t.Errorf("err = %v", err)
		}
		// A dry run only reads: it works while the folder is locked.
		if _, err := Run(opts(dir, true)); err != nil {
			t.Errorf("dry run: %v", err)
		}
	})
	t.Run("foreign file", func(t *testing.T) {
		dir := setup(t, "valid-openai")
		other := filepath.Join(t.TempDir(), "other")
		if _, err := snapshotSet(other); err != nil {
			t.Fatal(err)
		}
		es, _ := os.ReadDir(filepath.Join(other, "openai"))
		_ = os.MkdirAll(filepath.Join(dir, "openai"), 0o755)
		b, _ := os.ReadFile(filepath.Join(other, "openai", es[0].Name()))
		_ = os.WriteFile(filepath.Join(dir, "openai", es[0].Name()), b, 0o644)
		before := tree(t, dir, true)
		_, err := Run(opts(dir, false))
		var re *RefusedError
		if !errors.As(err, &re) || re.Problems[0].Rule != check.RuleUnexpectedFile {
			t.Fatalf("err = %v", err)
		}
		if after := tree(t, dir, true); !reflect.DeepEqual(before, after) {
			t.Error("files written")
		}
	})
	t.Run("stray file", func(t *testing.T) {
		dir := setup(t, "valid-openai")
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := tree(t, dir, true)
		_, err := Run(opts(dir, false))
		var re *RefusedError
		if !errors.As(err, &re) || len(re.Problems) != 1 || re.Problems[0].File != "notes.txt" {
			t.Fatalf("err = %v", err)
		}
		if after := tree(t, dir, true); !reflect.DeepEqual(before, after) {
			t.Error("files written")
		}
	})
	t.Run("migrated set", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), ".ai-snapshots")
		if _, err := snapshotSet(dir); err != nil {
			t.Fatal(err)
		}
		res, err := Run(opts(dir, false))
		if err != nil || !res.NothingToDo {
			t.Errorf("res = %+v, err = %v", res, err)
		}
	})
}

// assertTree pins a migrated set (tree output) byte for byte against the
// folder wantDir; -update rewrites the folder.
func assertTree(t *testing.T, got map[string]string, wantDir string) {
	t.Helper()
	if golden.Update() {
		_ = os.RemoveAll(wantDir)
		for rel, data := range got {
			p := filepath.Join(wantDir, filepath.FromSlash(rel))
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if want := tree(t, wantDir, true); !reflect.DeepEqual(got, want) {
		t.Errorf("migrated set differs from %s (run go test -update if intended): got %v, want %v", wantDir, keys(got), keys(want))
		for k := range got {
			if got[k] != want[k] {
				t.Errorf("%s differs:\n%s", k, got[k])
			}
		}
	}
}
