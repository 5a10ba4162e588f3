package check

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

func mustConfig(t *testing.T, s string) *Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func rules(fs finding.Findings) []string {
	var out []string
	for _, f := range fs {
		if f.Severity == finding.Error {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestParseConfigNormalize(t *testing.T) {
	cfg := mustConfig(t, `{"normalize":[{"rule":"uuid"},{"rule":"drop","paths":["/user"]}]}`)
	if cfg.Normalize.Len() != 2 || cfg.Normalizer() == nil || cfg.KeyContext() == nil {
		t.Fatalf("normalize not parsed: %+v", cfg.Normalize)
	}
	if (&Config{}).KeyContext() != nil || (*Config)(nil).Normalizer() != nil {
		t.Error("no rules must mean no key context")
	}
	for cfgText, want := range map[string]string{
		`{"normalize":[{"rule":"nope"}]}`:                               `/normalize/0/rule: unknown rule "nope"`,
		`{"normalize":[{"rule":"date"},{"rule":"date","paths":["x"]}]}`: `/normalize/1/paths/0: bad JSON pointer "x"`,
		`{"normalize":{}}`: `/normalize: must be an array`,
	} {
		if _, err := ParseConfig([]byte(cfgText)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cfgText, err, want)
		}
	}
}

// The id check under a config: an id made without the rules is a rekey
// finding (with the rekey fix), stale key_normalizers too; without any rule
// involved a mismatch stays an edited request.
func TestKeyFindingsUnderConfig(t *testing.T) {
	it := snapshottest.OpenAIChat("order 123e4567-e89b-12d3-a456-426614174000")
	if fs := checkItem(t, it, nil); fs.Errors() != 0 {
		t.Fatalf("baseline: %v", fs)
	}
	fs := checkItem(t, it, mustConfig(t, `{"normalize":[{"rule":"uuid"}]}`))
	if got := rules(fs); !slices.Equal(got, []string{RuleRekey}) || !strings.Contains(fs[0].Fix, "reindex --rekey") {
		t.Fatalf("findings %v", fs)
	}
	// Recorded under a rule named "a"; the config now names it "b": same
	// id, stale key_normalizers.
	a := mustConfig(t, `{"normalize":[{"rule":"regex","name":"a","pattern":"order \\S+","replace":"order X"}]}`)
	b := mustConfig(t, `{"normalize":[{"rule":"regex","name":"b","pattern":"order \\S+","replace":"order X"}]}`)
	it.KeyContext = a.KeyContext()
	if fs := checkItem(t, it, a); fs.Errors() != 0 {
		t.Fatalf("under its own config: %v", fs)
	}
	fs = checkItem(t, it, b)
	if len(fs) != 1 || fs[0].Pointer != "/snapshots/0/key_normalizers" || fs[0].Rule != RuleRekey ||
		fs[0].Message != "key_normalizers is [a], the current config gives [b]" {
		t.Fatalf("findings %v", fs)
	}
	// Recorded under rules, checked without: the id no longer matches.
	if got := rules(checkItem(t, it, nil)); !slices.Equal(got, []string{RuleRekey}) {
		t.Fatalf("rules %v", got)
	}
}

func writeSet(t *testing.T, items ...snapshottest.Item) *snapshot.Store {
	t.Helper()
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	return &snapshot.Store{Dir: dir}
}

// Two snapshots that collapse onto one key with equal answers are merged:
// the earliest timestamp is kept; the result passes every check.
func TestRekeyMergesEqualAnswers(t *testing.T) {
	a := snapshottest.OpenAIChat("ticket 17")
	b := snapshottest.OpenAIChat("ticket 18")
	b.Response = a.Response
	b.Time = a.Time.Add(-time.Hour) // earlier: kept
	other := snapshottest.OpenAIChat("unrelated")
	st := writeSet(t, a, b, other)
	cfg := mustConfig(t, `{"normalize":[{"rule":"regex","name":"ticket","pattern":"ticket \\d+","replace":"ticket N"}]}`)
	res, err := Rekey(st, Options{Config: cfg}, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	var dropped, renamed int
	for _, m := range res.Moves {
		if m.Dropped {
			dropped++
		} else if m.From != m.To {
			renamed++
		}
	}
	if dropped != 1 || renamed != 1 || len(res.Moves) != 2 {
		t.Fatalf("moves %+v", res.Moves)
	}
	set, err := CheckSet(st, Options{Config: cfg}, nil)
	if err != nil || !set.Valid() || len(set.Snapshots) != 2 {
		t.Fatalf("after rekey: %v %v", err, set.Findings)
	}
	for _, s := range set.Snapshots {
		if strings.Contains(s.Record.Request["messages"].([]any)[1].(map[string]any)["content"].(string), "ticket") {
			if s.Record.Timestamp != snapshot.FormatTimestamp(b.Time) || !slices.Equal(s.Record.KeyNormalizers, []string{"ticket"}) {
				t.Errorf("kept %s %v", s.Record.Timestamp, s.Record.KeyNormalizers)
			}
		} else if s.Record.KeyNormalizers != nil {
			t.Errorf("an unchanged key got key_normalizers %v", s.Record.KeyNormalizers)
		}
	}
	// A second rekey has nothing to do.
	res, err = Rekey(st, Options{Config: cfg}, time.Now())
	if err != nil || len(res.Moves) != 0 || res.Reindex.Changed {
		t.Fatalf("second rekey: %v %+v", err, res)
	}
}

// Different answers on one key: refused, nothing written.
func TestRekeyRefusesDifferentAnswers(t *testing.T) {
	st := writeSet(t, snapshottest.OpenAIChat("ticket 17"), snapshottest.OpenAIChat("ticket 18"))
	before := snapshotFiles(t, st.Dir)
	cfg := mustConfig(t, `{"normalize":[{"rule":"regex","pattern":"ticket \\d+","replace":"ticket N"}]}`)
	res, err := Rekey(st, Options{Config: cfg}, time.Now())
	if !errors.Is(err, ErrRekeyRefused) || len(res.Refused) != 1 || !strings.Contains(res.Refused[0].Message, "with a different answer (content:") {
		t.Fatalf("%v %+v", err, res)
	}
	if after := snapshotFiles(t, st.Dir); !slices.Equal(before, after) {
		t.Errorf("files changed:\n%v\n%v", before, after)
	}
}

// A set with a problem rekeying cannot fix (a tampered hash) is refused.
func TestRekeyRefusesBrokenSet(t *testing.T) {
	st := writeSet(t, snapshottest.OpenAIChat("a 2026-01-09"))
	var p string
	for _, f := range snapshotFiles(t, st.Dir) {
		if rel := strings.Fields(f)[0]; strings.HasPrefix(rel, "openai") {
			p = filepath.Join(st.Dir, rel)
		}
	}
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), `"tokens_used": 30`, `"tokens_used": 31`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Rekey(st, Options{Config: mustConfig(t, `{"normalize":[{"rule":"date"}]}`)}, time.Now())
	if !errors.Is(err, ErrRekeyRefused) || !slices.Contains(rules(res.Refused), RuleRecordHash) {
		t.Fatalf("%v %+v", err, res)
	}
}

// A conversation: the child's lineage follows its parent's new id (turn
// order), so the rekeyed set passes every check.
func TestRekeyConversation(t *testing.T) {
	parent := snapshottest.OpenAIChat("report for 2026-01-09")
	child := snapshottest.OpenAIChat("report for 2026-01-09")
	msgs := child.Request["messages"].([]any)
	child.Request["messages"] = append(slices.Clone(msgs),
		map[string]any{"role": "assistant", "content": "Summary: report for 2026-01-09"},
		map[string]any{"role": "user", "content": "and on 2026-01-10?"})
	st := writeSet(t, child, parent)
	cfg := mustConfig(t, `{"normalize":[{"rule":"date"}]}`)
	if set, _ := CheckSet(st, Options{Config: cfg}, nil); !slices.Contains(rules(set.Findings), RuleLineage) {
		t.Fatalf("before rekey the lineage must be stale too: %v", set.Findings)
	}
	if res, err := Rekey(st, Options{Config: cfg}, time.Now()); err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	set, err := CheckSet(st, Options{Config: cfg}, nil)
	if err != nil || !set.Valid() {
		t.Fatalf("after rekey: %v %v", err, set.Findings)
	}
}

func snapshotFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			data, _ := os.ReadFile(p)
			out = append(out, rel+" "+snapshot.SHA256Prefixed(data))
		}
		return nil
	})
	return out
}
