package ledger_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

func TestExtractUsage(t *testing.T) {
	for _, tc := range []struct {
		name, provider, endpoint string
		counts                   map[string]int64
		tokensUsed               int64
		want                     ledger.Usage
	}{
		{"openai chat", "openai", "/v1/chat/completions", map[string]int64{"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}, 30,
			ledger.Usage{Input: 20, Output: 10, Total: 30, Split: true}},
		{"openai embeddings", "openai", "/v1/embeddings", map[string]int64{"prompt_tokens": 8, "total_tokens": 8}, 8,
			ledger.Usage{Input: 8, Total: 8, Split: true}},
		{"openai responses", "openai", "/v1/responses", map[string]int64{"input_tokens": 50, "output_tokens": 70, "total_tokens": 120}, 120,
			ledger.Usage{Input: 50, Output: 70, Total: 120, Split: true}},
		{"anthropic with cache", "anthropic", "/v1/messages", map[string]int64{"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 40}, 152,
			ledger.Usage{Input: 5, Output: 7, CacheRead: 100, CacheWrite: 40, Total: 152, Split: true}},
		{"gemini with thoughts", "gemini", "/v1beta/models/gemini-2.5-flash:generateContent",
			map[string]int64{"promptTokenCount": 12, "candidatesTokenCount": 30, "thoughtsTokenCount": 100, "totalTokenCount": 142}, 142,
			ledger.Usage{Input: 12, Output: 130, Total: 142, Split: true}},
		{"gemini without total", "gemini", "/v1beta/models/gemini-2.5-flash:generateContent",
			map[string]int64{"promptTokenCount": 12, "candidatesTokenCount": 30}, 0,
			ledger.Usage{Input: 12, Output: 30, Total: 42, Split: true}},
		{"ollama", "ollama", "/api/chat", map[string]int64{"prompt_eval_count": 26, "eval_count": 298}, 324,
			ledger.Usage{Input: 26, Output: 298, Total: 324, Split: true}},
		{"ollama embed", "ollama", "/api/embed", map[string]int64{"prompt_eval_count": 8}, 8,
			ledger.Usage{Input: 8, Total: 8, Split: true}},
		{"tokens_used only", "openai", "/v1/chat/completions", map[string]int64{}, 12, ledger.Usage{Total: 12}},
		{"other provider's fields are not guessed", "openai", "/v1/chat/completions", map[string]int64{"promptTokenCount": 3}, 9, ledger.Usage{Total: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ledger.ExtractUsage(tc.provider, tc.endpoint, tc.counts, tc.tokensUsed); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// UsageOf (record, verify --live) finds usage where the lean read does:
// the stored usage, else the body's usage, usageMetadata or Ollama counters.
func TestUsageOfBodyFallbacks(t *testing.T) {
	n := func(i int64) any { return json.Number(string(rune('0' + i))) }
	for _, tc := range []struct {
		provider, endpoint string
		resp               snapshot.Response
		want               ledger.Usage
	}{
		{"ollama", "/api/chat", snapshot.Response{Fields: snapshot.Fields{TokensUsed: 7}, Body: map[string]any{"prompt_eval_count": n(3), "eval_count": n(4)}}, ledger.Usage{Input: 3, Output: 4, Total: 7, Split: true}},
		{"gemini", "/v1beta/models/g:generateContent", snapshot.Response{Body: map[string]any{"usageMetadata": map[string]any{"promptTokenCount": n(2), "candidatesTokenCount": n(5), "totalTokenCount": n(7)}}}, ledger.Usage{Input: 2, Output: 5, Total: 7, Split: true}},
		{"openai", "/v1/chat/completions", snapshot.Response{Fields: snapshot.Fields{TokensUsed: 9}, Body: map[string]any{"usage": map[string]any{"prompt_tokens": 4.0, "completion_tokens": 5.0}}}, ledger.Usage{Input: 4, Output: 5, Total: 9, Split: true}},
		{"openai", "/v1/chat/completions", snapshot.Response{Fields: snapshot.Fields{TokensUsed: 9}}, ledger.Usage{Total: 9}},
	} {
		if got := ledger.UsageOf(tc.provider, tc.endpoint, tc.resp); got != tc.want {
			t.Errorf("%s %+v: got %+v, want %+v", tc.provider, tc.resp, got, tc.want)
		}
	}
}

func TestNearestRank(t *testing.T) {
	s := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, tc := range []struct {
		p    float64
		want int64
	}{{50, 50}, {95, 100}, {90, 90}, {1, 10}, {100, 100}} {
		if got := ledger.NearestRank(s, tc.p); got != tc.want {
			t.Errorf("p%.0f = %d, want %d", tc.p, got, tc.want)
		}
	}
	if ledger.NearestRank([]int64{7}, 95) != 7 || ledger.NearestRank(nil, 50) != 0 {
		t.Error("one value / empty")
	}
	// 20 values: p95 is rank 19 (ceil(0.95*20)), not the max.
	var twenty []int64
	for i := int64(1); i <= 20; i++ {
		twenty = append(twenty, i)
	}
	if got := ledger.NearestRank(twenty, 95); got != 19 {
		t.Errorf("p95 of 1..20 = %d, want 19", got)
	}
}

// The cost of the fixture, computed by hand:
//
//	gpt-4o-mini-2024-07-18: 590 in × $0.15 + 60 out × $0.60 per 1M = 0.0000885 + 0.000036 = 0.0001245
//	claude-sonnet-4-5-20250929: 650 × 3 + 65 × 15 + 2000 cache-read × 0.3 = (1950 + 975 + 600) / 1e6 = 0.003525
//	total 0.0036495 → 0.00365 (half up at 6 decimals); gpt alone 0.0001245 → 0.000125
//
// Unpriced: Claude's 200 cache-write tokens (no cache_write price) and the
// 12 tokens of the call with only tokens_used.
func TestCostByHand(t *testing.T) {
	rep := ledger.Stats(loadFixture(t, ledger.ReadOptions{}), "model", fixturePrices(t))
	cost := map[string]float64{}
	for _, g := range rep.Groups {
		if g.CostUSD == nil {
			t.Fatalf("%s unpriced", g.Key)
		}
		cost[g.Key] = *g.CostUSD
	}
	want := map[string]float64{"gpt-4o-mini-2024-07-18": 0.000125, "claude-sonnet-4-5-20250929": 0.003525}
	if !reflect.DeepEqual(cost, want) {
		t.Errorf("group costs %v, want %v", cost, want)
	}
	if rep.Total.CostUSD == nil || *rep.Total.CostUSD != 0.00365 {
		t.Errorf("total cost %v, want 0.00365", rep.Total.CostUSD)
	}
	wantUnpriced := []ledger.Unpriced{
		{Model: "claude-sonnet-4-5-20250929", Tokens: 200, Reason: ledger.ReasonNoCacheWrite},
		{Model: "gpt-4o-mini-2024-07-18", Tokens: 12, Reason: ledger.ReasonNoBreakdown},
	}
	if !reflect.DeepEqual(rep.Unpriced, wantUnpriced) || rep.Total.UnpricedTokens != 212 {
		t.Errorf("unpriced %+v (%d tokens)", rep.Unpriced, rep.Total.UnpricedTokens)
	}
	if rep.Total.Tokens.Total != 3577 || rep.Total.Tokens.Input != 1240 || rep.Total.Tokens.CacheRead != 2000 {
		t.Errorf("tokens %+v", rep.Total.Tokens)
	}
	if rep.Total.StreamedShare != 0.25 || rep.Total.LatencyMS != (ledger.Latency{P50: 450, P95: 800, Max: 800}) {
		t.Errorf("streamed %v latency %+v", rep.Total.StreamedShare, rep.Total.LatencyMS)
	}
	// With a cache_write price every split token is priced.
	prices := fixturePrices(t)
	p := prices["claude-sonnet-4-5-20250929"]
	w := 3.75
	p.CacheWrite = &w
	prices["claude-sonnet-4-5-20250929"] = p
	rep = ledger.Stats(loadFixture(t, ledger.ReadOptions{}), "provider", prices)
	if c := rep.Groups[0]; c.Key != "anthropic" || *c.CostUSD != 0.004275 || c.UnpricedTokens != 0 {
		t.Errorf("anthropic with cache_write: %+v cost %v", c, *c.CostUSD) // 0.003525 + 200 × 3.75 / 1e6
	}
	// An unknown model is unpriced, never guessed.
	rep = ledger.Stats(loadFixture(t, ledger.ReadOptions{}), "model", map[string]check.Price{"gpt-4o-mini": {Input: 1, Output: 1}})
	if rep.Total.CostUSD != nil || len(rep.Unpriced) != 2 || rep.Unpriced[0].Reason != ledger.ReasonNoPrice || rep.Unpriced[1].Tokens != 662 {
		t.Errorf("prices by the requested name must not apply to the served model: %+v %+v", rep.Total.CostUSD, rep.Unpriced)
	}
}

// The lean read agrees with the full, validated decode on every field it
// keeps, for the realistic benchmark files and the fixture.
func TestReadEntryAgreesWithFullDecode(t *testing.T) {
	var items []snapshottest.Item
	for i := 0; i < 4; i++ {
		items = append(items, gen.Item(i))
	}
	items = append(items, fixtureItems()...)
	for _, it := range items {
		rel, data, err := snapshottest.File(it)
		if err != nil {
			t.Fatal(err)
		}
		compareLean(t, rel, data)
	}
}

func compareLean(t *testing.T, rel string, data []byte) {
	t.Helper()
	provider, _, _ := strings.Cut(rel, "/")
	s, fs := check.CheckBytes(rel, data, check.Options{})
	if s == nil || fs.Errors() > 0 {
		t.Fatalf("full check: %v", fs)
	}
	r := s.Record
	var e ledger.Entry
	if err := ledger.ReadEntry(data, provider, ledger.ReadOptions{Conversation: true}, &e); err != nil {
		t.Fatalf("lean read of a valid file: %v", err)
	}
	model, _ := r.Request["model"].(string)
	endpoint := string(registry.ForRecord(provider, r.Request).Endpoint())
	got := []any{e.ID, e.Timestamp, e.Source, e.RequestModel, e.ResponseModel, e.FinishReason, e.TokensUsed, e.LatencyMS, e.Stream, e.ParentID, e.Turn,
		e.Endpoint, e.Usage, e.Excerpt}
	want := []any{r.ID, r.Timestamp, r.Source, model, r.Response.Model, r.Response.FinishReason, r.Response.TokensUsed, r.Response.LatencyMS, r.Response.Stream, r.ParentID, r.Turn,
		endpoint, ledger.UsageOf(provider, endpoint, r.Response), ledger.Shorten(check.Redact(r.Response.Content), ledger.ExcerptLen)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lean %v\nfull %v", got, want)
	}
	if len(e.ToolNames) != len(r.Response.ToolCalls) {
		t.Errorf("tool names %v for %d tool calls", e.ToolNames, len(r.Response.ToolCalls))
	}
}

func TestConversationMarks(t *testing.T) {
	byID := map[string]ledger.Entry{}
	for _, e := range loadFixture(t, ledger.ReadOptions{Conversation: true}) {
		byID[e.ID] = e
	}
	if e := byID["6de56a035893"]; !reflect.DeepEqual(e.ToolNames, []string{"get_weather"}) || e.ToolResults {
		t.Errorf("tool call turn: %+v", e)
	}
	if e := byID["9691f547c4c3"]; len(e.ToolNames) != 0 || !e.ToolResults || e.ParentID != "6de56a035893" || e.Turn != 2 {
		t.Errorf("tool result turn: %+v", e)
	}
	if e := byID["4ef187c5eb0e"]; e.ToolResults || e.Turn != 3 {
		t.Errorf("plain turn: %+v", e)
	}
	// Other wire formats' tool calls and results.
	for _, tc := range []struct {
		name, file string
		names      []string
		results    bool
	}{
		{"openai", `{"response":{"tool_calls":[{"id":"c","type":"function","function":{"name":"a","arguments":"{}"}},{"function":{"name":"b"}}]},"request":{"messages":[{"role":"user"},{"role":"assistant"},{"role":"tool","content":"x"}]}}`, []string{"a", "b"}, true},
		{"responses", `{"response":{"tool_calls":[{"type":"function_call","name":"f","call_id":"1"}]},"request":{"input":[{"role":"user"},{"type":"function_call"},{"type":"function_call_output","output":"x"}]}}`, []string{"f"}, true},
		{"gemini", `{"response":{"tool_calls":[{"functionCall":{"name":"g","args":{}},"thoughtSignature":"s"}]},"request":{"contents":[{"role":"user"},{"role":"model","parts":[{"functionCall":{"name":"g"}}]},{"role":"user","parts":[{"functionResponse":{"name":"g"}}]}]}}`, []string{"g"}, true},
		{"answered after results", `{"response":{},"request":{"messages":[{"role":"assistant"},{"role":"tool"},{"role":"assistant"},{"role":"user","content":"thanks"}]}}`, nil, false},
	} {
		data := `{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa","source":{"file":"a","line":1,"function":"f"},` + strings.TrimPrefix(tc.file, "{") + `],"hash":"x"}`
		var e ledger.Entry
		if err := ledger.ReadEntry([]byte(data), "openai", ledger.ReadOptions{Conversation: true}, &e); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(e.ToolNames, tc.names) || e.ToolResults != tc.results {
			t.Errorf("%s: names %v results %v", tc.name, e.ToolNames, e.ToolResults)
		}
	}
}

// A 1.1.0 record's endpoint field wins over the derived one; body usage is
// used when the record stores none (Ollama).
func TestReadEntryEndpointAndBodyUsage(t *testing.T) {
	data := `{"version":"1.1.0","snapshots":[{"id":"bbbbbbbbbbbb","timestamp":"2026-01-09T10:30:00Z","source":{"file":"a.py","line":3,"function":"f"},
	  "endpoint":"/api/chat","request":{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]},
	  "response":{"content":"hello","tokens_used":9,"latency_ms":5,"finish_reason":"stop","body":{"model":"llama3.2","prompt_eval_count":4,"eval_count":5,"done":true}}}],"hash":"x"}`
	var e ledger.Entry
	if err := ledger.ReadEntry([]byte(data), "ollama", ledger.ReadOptions{}, &e); err != nil {
		t.Fatal(err)
	}
	if e.Endpoint != "/api/chat" || e.Usage != (ledger.Usage{Input: 4, Output: 5, Total: 9, Split: true}) || e.Model() != "llama3.2" {
		t.Errorf("%+v", e)
	}
}

func TestLoadReportsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.Many(2)...); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "openai", "aaaaaaaaaaaa.json")
	os.WriteFile(bad, []byte(`{"version":"1.0.0","snapshots":[`), 0o644)
	renamed := filepath.Join(dir, "openai", "bbbbbbbbbbbb.json")
	good, _ := filepath.Glob(filepath.Join(dir, "anthropic", "*.json"))
	data, _ := os.ReadFile(good[0])
	os.WriteFile(renamed, data, 0o644)
	old := filepath.Join(dir, "openai", "cccccccccccc.json")
	os.WriteFile(old, []byte(`{"version":"0.9.0","snapshots":[]}`), 0o644)
	entries, problems, err := ledger.Load(&snapshot.Store{Dir: dir}, ledger.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || len(problems) != 3 {
		t.Fatalf("%d entries, problems %v", len(entries), problems)
	}
	for i, want := range []string{"not valid JSON (damaged or truncated; traceforge verify shows where)", "is not its file name", `format version "0.9.0" is not 1.x`} {
		if p := problems[i]; !errors.Is(p.Err, ledger.ErrUnreadable) || !strings.Contains(p.Err.Error(), want) {
			t.Errorf("problem %d: %s: %v, want %q", i, p.Rel, p.Err, want)
		}
	}
	if _, _, err := ledger.Load(&snapshot.Store{Dir: filepath.Join(dir, "nope")}, ledger.ReadOptions{}); err == nil {
		t.Error("a missing folder must be an error")
	}
}

func entry(id, parent string, turn int, ts string) ledger.Entry {
	return ledger.Entry{ID: id, ParentID: parent, Turn: turn, Timestamp: ts, Provider: "openai", RequestModel: "m"}
}

func TestForestOrderCyclesAndForks(t *testing.T) {
	entries := []ledger.Entry{
		entry("000000000003", "000000000001", 2, "2026-01-01T00:00:02Z"),
		entry("000000000002", "000000000001", 2, "2026-01-01T00:00:01Z"),
		entry("000000000001", "", 0, "2026-01-01T00:00:00Z"),
		entry("00000000000a", "00000000000b", 2, "2026-01-01T00:00:00Z"), // a ↔ b: an edited set
		entry("00000000000b", "00000000000a", 2, "2026-01-01T00:00:00Z"),
		entry("00000000000c", "00000000000b", 3, "2026-01-01T00:00:00Z"),
		entry("00000000000d", "00000000000d", 2, "2026-01-01T00:00:00Z"), // its own parent
	}
	render := func(es []ledger.Entry) string {
		var b strings.Builder
		if err := (&ledger.View{Forest: ledger.BuildForest(es)}).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	want := render(entries)
	for i := 0; i < 5; i++ {
		shuffled := append([]ledger.Entry(nil), entries...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := render(shuffled); got != want {
			t.Fatalf("order depends on input order:\n%s\nvs\n%s", got, want)
		}
	}
	f := ledger.BuildForest(entries)
	var roots []string
	for _, r := range f.Roots {
		roots = append(roots, r.ID)
		if (r.ID == "00000000000a" || r.ID == "00000000000d") != r.Cycle {
			t.Errorf("%s: cycle %v", r.ID, r.Cycle)
		}
	}
	if want := []string{"000000000001", "00000000000a", "00000000000d"}; !reflect.DeepEqual(roots, want) {
		t.Errorf("roots %v, want %v", roots, want)
	}
	first := f.Lookup("000000000001")
	if len(first.Children) != 2 || first.Children[0].ID != "000000000002" {
		t.Errorf("fork children in timestamp order: %v", first.Children)
	}
	if p := f.Lookup("00000000000c").Path(); len(p) != 3 || p[0].ID != "00000000000a" {
		t.Errorf("path through the cut cycle: %v", p)
	}
	if !strings.Contains(want, "├─ t2 000000000002") || !strings.Contains(want, "└─ t2 000000000003") ||
		!strings.Contains(want, "3 conversations, 7 calls, 0 tool iterations, 1 fork, 0 missing parents, 2 lineage cycles") {
		t.Errorf("text:\n%s", want)
	}
}

// A long agent loop is a timeline, not a staircase: no indent grows with it.
func TestLongChainStaysFlat(t *testing.T) {
	var es []ledger.Entry
	prev := ""
	for i := 0; i < 2000; i++ {
		id := fmt.Sprintf("%012x", i+1)
		es = append(es, entry(id, prev, i+1, "2026-01-01T00:00:00Z"))
		prev = id
	}
	var b strings.Builder
	if err := (&ledger.View{Forest: ledger.BuildForest(es)}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n")[:2000] {
		if !strings.HasPrefix(l, "t") {
			t.Fatalf("indented line %q", l)
		}
	}
}

func TestTotals(t *testing.T) {
	tot := ledger.NewTotals(fixturePrices(t))
	var wg sync.WaitGroup
	for _, it := range fixtureItems() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := it.Request["model"].(string)
			tot.Add(it.Provider, string(registry.ForRecord(it.Provider, it.Request).Endpoint()), req, it.Response)
		}()
	}
	wg.Wait()
	s := tot.Summary()
	want := "totals: 8 calls, 3,577 tokens (1,240 in, 125 out, 2,200 cache), cost $0.003650 (+212 unpriced tokens), latency p50 450ms p95 800ms"
	if render.TotalsLine(s) != want {
		t.Errorf("line:\n%s\nwant\n%s", render.TotalsLine(s), want)
	}
	rep := ledger.Stats(loadFixture(t, ledger.ReadOptions{}), "model", fixturePrices(t))
	if *s.CostUSD != *rep.Total.CostUSD || s.Tokens != rep.Total.Tokens || s.LatencyMS != rep.Total.LatencyMS {
		t.Errorf("run totals %+v differ from stats over the same calls %+v", s, rep.Total)
	}
	if l := render.TotalsLine(ledger.NewTotals(nil).Summary()); l != "totals: 0 calls, 0 tokens, latency p50 0ms p95 0ms" {
		t.Errorf("empty: %s", l)
	}
}

// A key in an answer is redacted before the excerpt cuts it: a cut key
// would no longer match any rule and leak its first characters.
func TestExcerptRedactsBeforeCutting(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("A", 74) + "T3BlbkFJ" + strings.Repeat("B", 74)
	data := `{"version":"1.0.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{"messages":[]},"response":{"content":"your key: ` + key + `"}}]}`
	var e ledger.Entry
	if err := ledger.ReadEntry([]byte(data), "openai", ledger.ReadOptions{Conversation: true}, &e); err != nil {
		t.Fatal(err)
	}
	if e.Excerpt != "your key: [REDACTED:openai-api-key]" {
		t.Errorf("excerpt %q", e.Excerpt)
	}
}

// Stats on the project's own snapshot set (examples/demo) agree with the
// full static check of the same files.
func TestStatsOnProjectSet(t *testing.T) {
	st := &snapshot.Store{Dir: "../../.ai-snapshots"}
	entries, problems, err := ledger.Load(st, ledger.ReadOptions{Conversation: true})
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %v", err, problems)
	}
	full, err := check.CheckSet(st, check.Options{}, nil)
	if err != nil || !full.Valid() {
		t.Fatalf("project set: %v %v", err, full.Findings)
	}
	var tokens, maxLatency int64
	for _, s := range full.Snapshots {
		tokens += s.Record.Response.TokensUsed
		maxLatency = max(maxLatency, s.Record.Response.LatencyMS)
	}
	rep := ledger.Stats(entries, "provider", nil)
	if len(entries) == 0 || rep.Total.Calls != len(full.Snapshots) || rep.Total.Tokens.Total != tokens || rep.Total.LatencyMS.Max != maxLatency {
		t.Errorf("stats %+v, full check: %d calls, %d tokens, max latency %d", rep.Total, len(full.Snapshots), tokens, maxLatency)
	}
	if sum := (&ledger.View{Forest: ledger.BuildForest(entries)}); len(sum.Forest.Roots) == 0 {
		t.Error("no conversation in the project set")
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"  hello \n\t world  ", 20, "hello world"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"abcde fgh", 6, "abcde…"},
		{"abcd efgh", 6, "abcd…"},
		{"ab  cd", 5, "ab cd"},
		{"héllo wörld", 8, "héllo w…"},
		{"", 5, ""},
		{"   ", 5, ""},
	} {
		if got := ledger.Shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// Two files with one id (an id collision, which verify reports) are both
// drawn; nothing is dropped silently.
func TestForestKeepsCollidingIDs(t *testing.T) {
	a := entry("000000000001", "", 0, "2026-01-01T00:00:00Z")
	b := a
	a.Rel, b.Rel, b.Provider = "openai/000000000001.json", "anthropic/000000000001.json", "anthropic"
	child := entry("000000000002", "000000000001", 2, "2026-01-01T00:00:01Z")
	f := ledger.BuildForest([]ledger.Entry{a, b, child})
	if len(f.Roots) != 2 || f.Roots[0].Entry.Rel != "anthropic/000000000001.json" || len(f.Roots[0].Children) != 1 || len(f.Roots[1].Children) != 0 {
		t.Errorf("roots %+v", f.Roots)
	}
}

// TestReadEntryNamesWhatIsWrong: each unusable file gets the reason the
// lean read stopped at.
func TestReadEntryNamesWhatIsWrong(t *testing.T) {
	rec := func(members string) string {
		return `{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{"model":"m"},"response":{}` + members + `}]}`
	}
	for _, c := range []struct{ data, want string }{
		{`{"version":"1.1.0","snapshots":[]}`, "no record in /snapshots/0"},
		{`{"snapshots":[{}]}`, "no format version"},
		{`{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{}}]}`, "no request or response"},
		{`{"version":"1.1.0","snapshots":[{"id":"AAAA","request":{},"response":{}}]}`, "no valid /snapshots/0/id"},
		{rec(`,"source":"app.go:1"`), "source is not an object"},
		{rec(`,"lineage":[]`), "lineage is not an object"},
		{`{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa","request":[],"response":{}}]}`, "request:"},
		{`{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{},"response":{"tokens_used":"12"}}]}`, "tokens_used: want an integer, got string"},
		{`{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{},"response":{"latency_ms":1.5}}]}`, "latency_ms:"},
		{`{"version":"1.1.0","snapshots":[{"id":"aaaaaaaaaaaa"`, "not valid JSON"},
	} {
		var e ledger.Entry
		err := ledger.ReadEntry([]byte(c.data), "openai", ledger.ReadOptions{Conversation: true}, &e)
		if !errors.Is(err, ledger.ErrUnreadable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.data, err, c.want)
		}
	}
}
