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
