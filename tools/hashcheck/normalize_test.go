package hashcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// normalizeConfig exercises every rule kind, wildcard paths, overlapping
// rules, ${1}/${name} expansion and a rule that changes nothing.
const normalizeConfig = `{"normalize": [
  {"rule": "iso-datetime"},
  {"rule": "date"},
  {"rule": "uuid", "paths": ["/messages/*/content"]},
  {"rule": "ulid"},
  {"rule": "unix-ms"},
  {"rule": "regex", "name": "ticket", "pattern": "ticket (?P<n>\\d+)-(\\d+)", "replace": "ticket ${2}/${n} $$"},
  {"rule": "regex", "pattern": "never-matches-anything", "replace": "x"},
  {"rule": "drop", "paths": ["/user", "/metadata/*/trace", "/messages/2"]}
]}`

func normalizedItems() []snapshottest.Item {
	a := snapshottest.OpenAIChat("at 2026-01-09T10:30:00Z (day 2026-01-09), session 123e4567-e89b-12d3-a456-426614174000, req 01ARZ3NDEKTSV4RRFFQ69G5FAV, ts 1767954600000, ticket 42-7")
	a.Request["user"] = "user-7f3a"
	a.Request["metadata"] = map[string]any{"x": map[string]any{"trace": "t-1", "keep": "k"}, "y": map[string]any{"trace": "t-2"}}
	a.Request["messages"] = append(a.Request["messages"].([]any), map[string]any{"role": "user", "content": "dropped"})
	b := snapshottest.OpenAIChat("nothing volatile here")
	c := snapshottest.AnthropicMessage("on 2026-01-09 please")
	// A conversation: the lineage parent is keyed under the rules too.
	d := snapshottest.OpenAIChat("at 2026-01-09T10:30:00Z (day 2026-01-09), session 123e4567-e89b-12d3-a456-426614174000, req 01ARZ3NDEKTSV4RRFFQ69G5FAV, ts 1767954600000, ticket 42-7")
	d.Request["messages"] = append(d.Request["messages"].([]any),
		map[string]any{"role": "assistant", "content": "ok"}, map[string]any{"role": "user", "content": "and 2026-02-01?"})
	return []snapshottest.Item{a, b, c, d}
}

// The Node checker reproduces ids, key_normalizers and lineage from the
// files plus the config, and notices a record whose key_normalizers do not
// match the config.
func TestNodeAgreesUnderKeyNormalizers(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".ai-snapshots")
	cfg, err := check.ParseConfig([]byte(normalizeConfig))
	if err != nil {
		t.Fatal(err)
	}
	items := normalizedItems()
	for i := range items {
		items[i].KeyContext = cfg.KeyContext()
	}
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".traceforge.json"), []byte(normalizeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	// Go itself accepts the set under the config, with key_normalizers on
	// the volatile records only.
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: cfg}, nil)
	if err != nil || !set.Valid() {
		t.Fatalf("go: %v %v", err, set.Findings)
	}
	var named int
	for _, s := range set.Snapshots {
		if len(s.Record.KeyNormalizers) > 0 {
			named++
		}
	}
	if named != 3 {
		t.Fatalf("%d records with key_normalizers, want 3", named)
	}
	want := []string{"iso-datetime", "date", "uuid", "ulid", "unix-ms", "ticket", "drop"}
	for _, s := range set.Snapshots {
		if s.Record.Turn == 0 && slices.Contains(s.Record.KeyNormalizers, "ticket") && !slices.Equal(s.Record.KeyNormalizers, want) {
			t.Errorf("key_normalizers %v, want %v", s.Record.KeyNormalizers, want)
		}
	}
	mustAgree(t, dir)

	// The same files under a config whose ticket rule has another name.
	other := filepath.Join(root, "other.json")
	if err := os.WriteFile(other, []byte(`{"normalize":[{"rule":"iso-datetime"},{"rule":"date"},{"rule":"uuid","paths":["/messages/*/content"]},{"rule":"ulid"},{"rule":"unix-ms"},{"rule":"regex","name":"tkt","pattern":"ticket (?P<n>\\d+)-(\\d+)","replace":"ticket ${2}/${n} $$"},{"rule":"drop","paths":["/user","/metadata/*/trace","/messages/2"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node(t), "hashcheck.mjs", "--config", other, dir)
	outb, err := cmd.CombinedOutput()
	if out := string(outb); err == nil || !strings.Contains(out, "key_normalizers: stored") {
		t.Fatalf("want a key_normalizers mismatch, got %v:\n%s", err, outb)
	}
}
