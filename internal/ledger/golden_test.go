package ledger_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenpkg "github.com/traceforge/traceforge/internal/golden"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Assert(t, filepath.Join("testdata", name), string(got))
}

// fixturePrices prices the fixture's two served models; Claude has a
// cache_read price but no cache_write price.
func fixturePrices(t *testing.T) map[string]check.Price {
	cfg, err := check.ParseConfig([]byte(`{"prices": {
		"gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.6},
		"claude-sonnet-4-5-20250929": {"input": 3, "output": 15, "cache_read": 0.3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Prices
}

func loadFixture(t *testing.T, opts ledger.ReadOptions) []ledger.Entry {
	t.Helper()
	entries, problems, err := ledger.Load(&snapshot.Store{Dir: fixtureDir}, opts)
	if err != nil || len(problems) > 0 {
		t.Fatalf("load fixture: %v %v", err, problems)
	}
	if len(entries) != len(fixtureItems()) {
		t.Fatalf("%d entries, want %d", len(entries), len(fixtureItems()))
	}
	return entries
}

func TestStatsGolden(t *testing.T) {
	entries := loadFixture(t, ledger.ReadOptions{})
	prices := fixturePrices(t)
	for _, by := range ledger.Groupings {
		rep := ledger.Stats(entries, by, prices)
		var text, js bytes.Buffer
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		golden(t, "stats_by_"+by+".txt", text.Bytes())
		golden(t, "stats_by_"+by+".json", js.Bytes())
	}
	var text bytes.Buffer
	if err := ledger.Stats(entries, "model", nil).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden(t, "stats_no_prices.txt", text.Bytes())
}

func TestTreeGolden(t *testing.T) {
	entries := loadFixture(t, ledger.ReadOptions{Conversation: true})
	forest := ledger.BuildForest(entries)
	for _, tc := range []struct{ name, id string }{
		{"tree", ""},
		{"tree_selected", "4ef187c5eb0e"}, // third turn of the forked conversation
		{"tree_missing_parent", "a2ca06d9ff82"},
	} {
		v := &ledger.View{Forest: forest}
		if tc.id != "" {
			if v.Selected = forest.Lookup(tc.id); v.Selected == nil {
				t.Fatalf("%s not in the fixture", tc.id)
			}
		}
		var text, js bytes.Buffer
		if err := v.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := v.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name+".txt", text.Bytes())
		golden(t, tc.name+".json", js.Bytes())
	}
}

// docs/stats.md shows the fixture's tree and stats; they must stay what the
// code prints.
func TestDocsExamples(t *testing.T) {
	md, err := os.ReadFile("../../docs/stats.md")
	if err != nil {
		t.Fatal(err)
	}
	for block, file := range map[string]string{"tree-example": "tree.txt", "stats-example": "stats_by_model.txt"} {
		_, rest, ok := strings.Cut(string(md), "```text "+block+"\n")
		body, _, ok2 := strings.Cut(rest, "```")
		want, _ := os.ReadFile(filepath.Join("testdata", file))
		if !ok || !ok2 || body != string(want) {
			t.Errorf("docs/stats.md %s block differs from testdata/%s:\n%s", block, file, body)
		}
	}
}
