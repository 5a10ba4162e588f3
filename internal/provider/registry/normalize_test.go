package registry_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/normalize"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// Declared key normalizers apply after the built-in key-only rules (so a
// pointer addresses the renumbered, stream-free key request), never touch
// the stored request or the headers, and report the rules that changed
// the key.
func TestKeyNormalizersAfterBuiltins(t *testing.T) {
	v, _ := snapshot.Decode([]byte(`[{"rule":"regex","name":"call","pattern":"^call_1$","replace":"first","paths":["/messages/*/tool_call_id"]},{"rule":"drop","paths":["/stream"]},{"rule":"date"}]`))
	set, err := normalize.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	kc := &provider.KeyContext{Normalize: set}
	body := `{"model":"m","stream":true,"temperature":0,"seed":1,"max_tokens":5,"messages":[
		{"role":"user","content":"weather on 2026-01-09"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_XYZ","type":"function","function":{"name":"w","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_XYZ","content":"sunny"}]}`
	h := http.Header{}
	req, err := registry.ParseWith("POST", "/v1/chat/completions", h, []byte(body), kc)
	if err != nil {
		t.Fatal(err)
	}
	// drop /stream changed nothing: the built-ins removed it already.
	if strings.Join(req.KeyNormalizers, ",") != "call,date" {
		t.Errorf("key_normalizers %v", req.KeyNormalizers)
	}
	if req.Body["messages"].([]any)[0].(map[string]any)["content"] != "weather on 2026-01-09" {
		t.Error("the stored request was normalized")
	}
	obj, err := registry.KeyObject("openai", req.Endpoint, req.Body, nil, kc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := snapshot.Canonical(obj["request"])
	if !strings.Contains(string(b), `"tool_call_id":"first"`) || !strings.Contains(string(b), `weather on <date>`) {
		t.Errorf("key request %s", b)
	}
	// Another date: the same key. Without the context: another key.
	other, err := registry.ParseWith("POST", "/v1/chat/completions", h, []byte(strings.Replace(body, "2026-01-09", "2031-12-24", 1)), kc)
	if err != nil || other.Key != req.Key {
		t.Fatalf("keys differ: %v", err)
	}
	plain, _ := registry.Parse("POST", "/v1/chat/completions", h, []byte(body))
	if plain.Key == req.Key || plain.KeyNormalizers != nil {
		t.Error("no key context must mean no normalizers")
	}
	// The record stores key_normalizers and its id is the normalized key.
	src := source.Source{File: "app.go", Line: 1, Function: "f"}
	resp := snapshot.Response{Fields: snapshot.Fields{Content: "ok", TokensUsed: 1, FinishReason: "stop"}}
	rec, key, err := registry.NewRecord("openai", req.Endpoint, time.Unix(0, 0), src, req.Body, nil, resp, kc)
	if err != nil {
		t.Fatal(err)
	}
	if key != req.Key || rec["id"] != snapshot.IDOf(req.Key) {
		t.Errorf("id %v, key %s", rec["id"], key)
	}
	if kn, _ := rec["key_normalizers"].([]any); len(kn) != 2 || kn[0] != "call" || kn[1] != "date" {
		t.Errorf("key_normalizers %v", rec["key_normalizers"])
	}
}

// NewRecordKeyed, given the key and key normalizers ParseWith computed and
// the lineage Lineage computed, builds exactly the record NewRecord builds
// (record hands them on instead of computing them again).
func TestNewRecordKeyedMatchesNewRecord(t *testing.T) {
	v, _ := snapshot.Decode([]byte(`[{"rule":"date"}]`))
	set, err := normalize.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	src := source.Source{File: "app.go", Line: 3, Function: "f"}
	resp := snapshot.Response{Fields: snapshot.Fields{Content: "ok", TokensUsed: 1, FinishReason: "stop"}, LatencyMS: 7}
	for name, tc := range map[string]struct {
		path, body string
		kc         *provider.KeyContext
	}{
		"chat, no lineage": {"/v1/chat/completions", `{"model":"m","temperature":0,"seed":1,"messages":[{"role":"user","content":"a"}]}`, nil},
		"chat, lineage and a key normalizer": {"/v1/chat/completions", `{"model":"m","temperature":0,"seed":1,"messages":[{"role":"user","content":"on 2026-01-09"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`,
			&provider.KeyContext{Normalize: set}},
		"anthropic with headers": {"/v1/messages", `{"model":"claude","max_tokens":5,"temperature":0,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`, nil},
		"responses input items":  {"/v1/responses", `{"model":"m","temperature":0,"input":[{"role":"user","content":"a"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"b"}]},{"role":"user","content":"c"}]}`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			h := http.Header{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"x"}}
			req, err := registry.ParseWith("POST", tc.path, h, []byte(tc.body), tc.kc)
			if err != nil {
				t.Fatal(err)
			}
			p := string(req.Provider)
			want, wantKey, err := registry.NewRecord(p, req.Endpoint, time.Unix(5, 0), src, req.Body, req.Headers, resp, tc.kc)
			if err != nil {
				t.Fatal(err)
			}
			var lin *snapshot.Lineage
			parent, turn, ok, err := registry.Lineage(p, req.Endpoint, req.Body, req.Headers, tc.kc)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				lin = &snapshot.Lineage{ParentID: parent, Turn: turn}
			}
			got, err := registry.NewRecordKeyed(req.Key, req.KeyNormalizers, lin, req.Endpoint, time.Unix(5, 0), src, req.Body, req.Headers, resp)
			if err != nil {
				t.Fatal(err)
			}
			if wantKey != req.Key {
				t.Errorf("NewRecord's key %s, ParseWith's %s", wantKey, req.Key)
			}
			gb, _ := snapshot.Canonical(got)
			wb, _ := snapshot.Canonical(want)
			if string(gb) != string(wb) {
				t.Errorf("NewRecordKeyed:\n%s\nNewRecord:\n%s", gb, wb)
			}
		})
	}
}

// BenchmarkNewRecord and BenchmarkNewRecordKeyed: a recorded chat call's
// record built from scratch (key and lineage computed again) and from the
// key and lineage computed at parse time (what record does).
func BenchmarkNewRecord(b *testing.B)      { benchmarkNewRecord(b, false) }
func BenchmarkNewRecordKeyed(b *testing.B) { benchmarkNewRecord(b, true) }

func benchmarkNewRecord(b *testing.B, keyed bool) {
	body := `{"model":"gpt-4o-mini","temperature":0,"seed":42,"max_tokens":50,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Question number 7 about snapshot testing"}]}`
	req, err := registry.ParseWith("POST", "/v1/chat/completions", http.Header{}, []byte(body), nil)
	if err != nil {
		b.Fatal(err)
	}
	ans, _ := snapshot.Decode([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Snapshot tests pin an output."},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27}}`))
	resp := snapshot.Response{Fields: snapshot.Fields{Content: "Snapshot tests pin an output.", TokensUsed: 27, FinishReason: "stop"}, Body: ans.(map[string]any)}
	src := source.Source{File: "app/a.go", Line: 1, Function: "f"}
	b.ReportAllocs()
	for b.Loop() {
		if keyed {
			_, err = registry.NewRecordKeyed(req.Key, req.KeyNormalizers, nil, req.Endpoint, time.Unix(5, 0), src, req.Body, req.Headers, resp)
		} else {
			_, _, err = registry.NewRecord("openai", req.Endpoint, time.Unix(5, 0), src, req.Body, req.Headers, resp, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
