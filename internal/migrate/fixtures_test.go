package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// -update (internal/golden) regenerates the legacy fixtures (with real
// hashes), the golden dry-run outputs and the expected migrated sets under
// testdata/legacy.

// legacyDir is where the fixtures live (repository root testdata).
var legacyDir = filepath.Join("..", "..", "testdata", "legacy")

type legacyFixture struct {
	name    string
	records []map[string]any
	// tamper edits the file after the hashes are computed.
	tamper func(records []map[string]any)
}

func src(file string, line int, function ...string) map[string]any {
	s := map[string]any{"file": file, "line": line}
	if len(function) > 0 {
		s["function"] = function[0]
	}
	return s
}

func resp(content string, tokens, latency int, finish string) map[string]any {
	return map[string]any{"content": content, "tokens": tokens, "latency_ms": latency, "finish_reason": finish}
}

func rec(id, provider, ts string, source, request, response map[string]any) map[string]any {
	return map[string]any{"id": id, "provider": provider, "timestamp": ts, "source": source, "request": request, "response": response}
}

func msgs(pairs ...string) []any {
	out := make([]any, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"role": pairs[i], "content": pairs[i+1]})
	}
	return out
}

func openaiReq(m []any, extra ...any) map[string]any {
	r := map[string]any{"model": "gpt-4-turbo", "messages": m, "temperature": 0.0, "max_tokens": 100, "seed": 42}
	for i := 0; i+1 < len(extra); i += 2 {
		r[extra[i].(string)] = extra[i+1]
	}
	return r
}

func anthropicReq(m []any, extra ...any) map[string]any {
	r := map[string]any{"model": "claude-3-5-sonnet-20241022", "messages": m, "temperature": 0.0, "max_tokens": 256}
	for i := 0; i+1 < len(extra); i += 2 {
		r[extra[i].(string)] = extra[i+1]
	}
	return r
}

var summarize = src("src/agents/summarizer.py", 12, "generate_summary")

func legacyFixtures() []legacyFixture {
	sumReq := openaiReq(msgs("system", "You are a precise summarization assistant.", "user", "Summarize: AI is transforming software development"),
		"top_p", 1.0, "frequency_penalty", 0.0, "presence_penalty", 0.0)
	sumResp := resp("AI is revolutionizing software development through automation.", 12, 450, "stop")
	askReq := anthropicReq(msgs("user", "What is snapshot testing?"), "system", "Answer in one sentence.")
	askResp := resp("Snapshot testing compares output against an approved recording.", 31, 612, "end_turn")
	followReq := anthropicReq(msgs("user", "What is snapshot testing?",
		"assistant", "Snapshot testing compares output against an approved recording.",
		"user", "Why does it need temperature 0?"), "system", "Answer in one sentence.")
	followResp := resp("Because any randomness would make the recording differ run to run.", 58, 701, "end_turn")
	toolHistory := openaiReq([]any{
		map[string]any{"role": "user", "content": "What is the weather in Paris?"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "call_Xa91", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_Xa91", "content": `{"temp_c":18}`},
	}, "tools", []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}})
	toolAnthropic := anthropicReq([]any{
		map[string]any{"role": "user", "content": "Weather in Oslo?"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": map[string]any{"city": "Oslo"}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "3°C, snow"}}},
	})
	completion := map[string]any{"model": "gpt-3.5-turbo-instruct", "prompt": "Say ok.", "temperature": 0, "max_tokens": 5, "seed": 7, "stop": "\n"}

	return []legacyFixture{
		{name: "valid-openai", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("ok-1", "openai", "2026-01-09T11:30:05.250+01:00", src("src/health.py", 3, "ping"), completion, resp("ok", 6, 120, "stop")),
		}},
		{name: "valid-anthropic", records: []map[string]any{
			rec("ask-1", "anthropic", "2026-01-09T10:31:00Z", src("app/ask.ts", 7, "ask"), askReq, askResp),
			rec("ask-2", "anthropic", "2026-01-09T10:31:02Z", src("app/ask.ts", 19, "followUp"), followReq, followResp),
		}},
		{name: "mixed-providers", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("ask-1", "anthropic", "2026-01-09T10:31:00Z", src("app/ask.ts", 7, "ask"), askReq, askResp),
			rec("weather-oa", "openai", "2026-01-09T10:32:00Z", src("agents/weather.go", 88, "(*Agent).Answer"), toolHistory,
				resp("It is 18 °C in Paris.", 97, 830, "stop")),
			rec("weather-an", "anthropic", "2026-01-09T10:33:00Z", src("agents/weather.py", 41, "answer"), toolAnthropic,
				resp("Oslo: 3 °C with snow — «dress warmly» 🧣", 120, 905, "end_turn")),
		}},
		{name: "tampered", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("ask-1", "anthropic", "2026-01-09T10:31:00Z", src("app/ask.ts", 7, "ask"), askReq, askResp),
		}, tamper: func(rs []map[string]any) {
			rs[1]["response"].(map[string]any)["content"] = "Snapshot testing is optional."
		}},
		{name: "missing-function", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("anon-1", "openai", "2026-01-09T10:34:00Z", src("scripts/batch.py", 40), openaiReq(msgs("user", "Classify: spam?")), resp("no", 9, 200, "stop")),
			rec("anon-2", "anthropic", "2026-01-09T10:35:00Z", src("scripts/batch.py", 52, ""), anthropicReq(msgs("user", "Classify: ham?")), resp("yes", 11, 230, "end_turn")),
		}},
		{name: "duplicate-equal", records: []map[string]any{
			rec("sum-late", "openai", "2026-01-10T08:00:00Z", src("src/agents/summarizer.py", 30, "generate_summary"), sumReq, resp("AI is revolutionizing software development through automation.", 12, 388, "stop")),
			rec("ask-1", "anthropic", "2026-01-09T10:31:00Z", src("app/ask.ts", 7, "ask"), askReq, askResp),
			rec("sum-early", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
		}},
		{name: "duplicate-conflict", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("sum-2", "openai", "2026-01-10T08:00:00Z", summarize, sumReq, resp("AI automates parts of software development.", 11, 402, "stop")),
		}},
		{name: "tool-call-finish", records: []map[string]any{
			rec("tool-oa", "openai", "2026-01-09T10:36:00Z", src("agents/weather.go", 80, "(*Agent).Ask"),
				openaiReq(msgs("user", "What is the weather in Paris?")), resp("", 40, 510, "tool_calls")),
			rec("tool-an", "anthropic", "2026-01-09T10:37:00Z", src("agents/weather.py", 30, "ask"),
				anthropicReq(msgs("user", "Weather in Oslo?")), resp("", 52, 640, "tool_use")),
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
		}},
		{name: "unknown-provider", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("gem-1", "gemini", "2026-01-09T10:38:00Z", src("app/gem.py", 5, "ask"),
				map[string]any{"model": "gemini-1.5-pro", "contents": []any{"hi"}, "temperature": 0, "max_tokens": 10}, resp("hello", 5, 300, "STOP")),
		}},
		{name: "policy-violation", records: []map[string]any{
			rec("hot-1", "openai", "2026-01-09T10:39:00Z", src("app/creative.py", 9, "poem"),
				map[string]any{"model": "gpt-4-turbo", "messages": msgs("user", "Write a haiku."), "temperature": 0.7, "max_tokens": 60},
				resp("Silent snapshot waits", 20, 700, "stop")),
			rec("ask-1", "anthropic", "2026-01-09T10:31:00Z", src("app/ask.ts", 7, "ask"), askReq, askResp),
		}},
		{name: "many-problems", records: []map[string]any{
			rec("sum-1", "openai", "2026-01-09T10:30:00Z", summarize, sumReq, sumResp),
			rec("edited", "anthropic", "2026-01-09T10:31:00Z", src("app/ask.ts", 7, "ask"), askReq, askResp),
			rec("anon", "openai", "2026-01-09T10:34:00Z", src("scripts/batch.py", 40), openaiReq(msgs("user", "Classify: spam?")), resp("no", 9, 200, "stop")),
			rec("tool", "openai", "2026-01-09T10:36:00Z", src("agents/weather.go", 80, "(*Agent).Ask"),
				openaiReq(msgs("user", "What is the weather in Paris?")), resp("", 40, 510, "tool_calls")),
			rec("gem", "gemini", "2026-01-09T10:38:00Z", src("app/gem.py", 5, "ask"),
				map[string]any{"model": "gemini-1.5-pro", "contents": []any{"hi"}}, resp("hello", 5, 300, "STOP")),
			rec("hot", "openai", "2026-01-09T10:39:00Z", src("app/creative.py", 9, "poem"),
				map[string]any{"model": "gpt-4-turbo", "messages": msgs("user", "Write a haiku."), "temperature": 0.7, "max_tokens": 60},
				resp("Silent snapshot waits", 20, 700, "stop")),
		}, tamper: func(rs []map[string]any) {
			rs[1]["response"].(map[string]any)["tokens"] = 3
		}},
	}
}

// fixtureBytes renders a fixture's snapshots.json with real 0.9.0 hashes.
func fixtureBytes(t *testing.T, f legacyFixture) []byte {
	t.Helper()
	// Round-trip through the strict decoder so the hashes are computed over
	// exactly the values the file will hold (json.Number, as migrate reads them).
	list := make([]any, 0, len(f.records))
	var decoded []map[string]any
	for _, r := range f.records {
		b, err := snapshot.MarshalPretty(r)
		if err != nil {
			t.Fatal(err)
		}
		v, err := snapshot.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		m := v.(map[string]any)
		h, err := LegacyRecordHash(m)
		if err != nil {
			t.Fatal(err)
		}
		m["hash"] = h
		decoded = append(decoded, m)
		list = append(list, m)
	}
	if f.tamper != nil {
		f.tamper(decoded)
	}
	doc := map[string]any{"version": LegacyVersion, "snapshots": list}
	out, err := marshalLegacy(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// marshalLegacy writes a 0.9.0 document the way the old tool did: 2-space
// indent, keys in insertion-like order (version, snapshots; id, timestamp,
// provider, source, request, response, hash), nested objects in JCS order.
// The key order is irrelevant to every hash (JCS sorts), which the fixtures
// prove by not being sorted.
func marshalLegacy(doc map[string]any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n  \"version\": ")
	v, _ := snapshot.Canonical(doc["version"])
	b.Write(v)
	b.WriteString(",\n  \"snapshots\": [")
	list, _ := doc["snapshots"].([]any)
	order := []string{"id", "timestamp", "provider", "source", "request", "response", "hash"}
	for i, r := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    {")
		m := r.(map[string]any)
		first := true
		for _, k := range order {
			val, ok := m[k]
			if !ok {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			pretty, err := snapshot.MarshalPretty(val)
			if err != nil {
				return nil, err
			}
			b.WriteString("\n      \"" + k + "\": ")
			b.Write(bytes.ReplaceAll(bytes.TrimRight(pretty, "\n"), []byte("\n"), []byte("\n      ")))
		}
		b.WriteString("\n    }")
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), nil
}

// TestFixtures keeps testdata/legacy/*/snapshots.json equal to what the
// definitions above produce (run with -update to rewrite them).
func TestFixtures(t *testing.T) {
	for _, f := range legacyFixtures() {
		want := fixtureBytes(t, f)
		p := filepath.Join(legacyDir, f.name, LegacyFile)
		if golden.Update() {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run: go test ./internal/migrate -run TestFixtures -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run: go test ./internal/migrate -update", p)
		}
		if _, err := snapshot.Decode(got); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
