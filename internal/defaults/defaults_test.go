package defaults_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := snapshot.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func parse(t *testing.T, s string) *defaults.Set {
	t.Helper()
	v, err := snapshot.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	set, err := defaults.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := snapshot.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGlobStarCrossesSlash(t *testing.T) {
	for _, c := range []struct {
		glob, name string
		want       bool
	}{
		{"*", "meta-llama/Llama-3.3-70B-Instruct", true},
		{"meta-llama/*", "meta-llama/Llama-3.3-70B-Instruct", true},
		{"meta-llama/*", "meta-llama", false},
		{"*/*", "Qwen/Qwen2.5-72B", true},
		{"*/*", "gpt-4o", false},
		{"gpt-4o*", "gpt-4o-mini", true},
		{"gpt-4o*", "gpt-4", false},
		{"o?-mini", "o3-mini", true},
		{"o[13]*", "o3-pro", true},
		{"o[!13]*", "o3-pro", false},
		{"*:generateContent", "/v1beta/models/gemini-2.5-flash:generateContent", true},
		{"*:generateContent", "/v1beta/models/text-embedding-004:embedContent", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"gpt.4", "gpt-4", false}, // regexp metacharacters match themselves
	} {
		if got := defaults.MatchGlob(c.glob, c.name); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", c.glob, c.name, got, c.want)
		}
	}
	for _, bad := range []string{"[abc", `abc\`, "[]"} {
		if _, err := defaults.CompileGlob(bad); err == nil {
			t.Errorf("CompileGlob(%q): no error", bad)
		}
	}
}

func TestFirstMatchingRuleWins(t *testing.T) {
	set := parse(t, `[
		{"model": "o3*", "endpoint": "/v1/chat/completions", "set": {"/temperature": 1}},
		{"model": "*", "endpoint": "/v1/chat/completions", "set": {"/temperature": 0, "/seed": 42}},
		{"model": "*", "set": {"/max_tokens": 7}}
	]`)
	req := decode(t, `{"model": "o3-mini", "messages": []}`)
	got := set.ApplyDefaults("/v1/chat/completions", req)
	if !reflect.DeepEqual(got, []string{"/temperature"}) {
		t.Fatalf("applied %v", got)
	}
	if canon(t, req) != `{"messages":[],"model":"o3-mini","temperature":1}` {
		t.Fatalf("request %s", canon(t, req))
	}
	// The endpoint filter: another endpoint falls through to the rule without one.
	req = decode(t, `{"model": "o3-mini", "input": "hi"}`)
	if got := set.ApplyDefaults("/v1/responses", req); !reflect.DeepEqual(got, []string{"/max_tokens"}) {
		t.Fatalf("applied %v", got)
	}
	// A model with a slash matches "*".
	req = decode(t, `{"model": "meta-llama/Llama-3.3-70B-Instruct"}`)
	if got := set.ApplyDefaults("/v1/chat/completions", req); !reflect.DeepEqual(got, []string{"/seed", "/temperature"}) {
		t.Fatalf("applied %v (pointers are reported in sorted order)", got)
	}
}

func TestPresentValuesAreNeverChanged(t *testing.T) {
	set := parse(t, `[{"model": "*", "set": {"/temperature": 0, "/seed": 42, "/max_tokens": 100}}]`)
	req := decode(t, `{"model": "m", "temperature": 0.7, "seed": null, "max_tokens": 0}`)
	got := set.ApplyDefaults("/v1/chat/completions", req)
	// An explicit null counts as absent; 0.7 and 0 are values.
	if !reflect.DeepEqual(got, []string{"/seed"}) {
		t.Fatalf("applied %v", got)
	}
	if canon(t, req) != `{"max_tokens":0,"model":"m","seed":42,"temperature":0.7}` {
		t.Fatalf("request %s", canon(t, req))
	}
	// No model, no rule that matches: nothing.
	if got := parse(t, `[{"model": "gpt*", "set": {"/seed": 1}}]`).ApplyDefaults("/x", decode(t, `{"prompt": "p"}`)); got != nil {
		t.Fatalf("applied %v", got)
	}
}

// An equivalent member present (max_tokens for max_completion_tokens on
// chat completions) keeps the default out: both at once is invalid.
func TestEquivalentMembersKeepTheDefaultOut(t *testing.T) {
	set := parse(t, `[{"model": "*", "set": {"/temperature": 0, "/max_completion_tokens": 4096, "/max_tokens": 4096}}]`)
	req := decode(t, `{"model": "gpt-4o-mini", "max_tokens": 50}`)
	if got := set.ApplyDefaults("/v1/chat/completions", req); !reflect.DeepEqual(got, []string{"/temperature"}) {
		t.Fatalf("applied %v", got)
	}
	req = decode(t, `{"model": "gpt-4o-mini", "max_completion_tokens": 50}`)
	if got := set.ApplyDefaults("/v1/chat/completions", req); !reflect.DeepEqual(got, []string{"/temperature"}) {
		t.Fatalf("applied %v", got)
	}
	// Other endpoints know no such equivalence.
	req = decode(t, `{"model": "claude", "max_tokens": 50}`)
	if got := set.ApplyDefaults("/v1/messages", req); !reflect.DeepEqual(got, []string{"/max_completion_tokens", "/temperature"}) {
		t.Fatalf("applied %v", got)
	}
}

func TestNestedPointersCreateObjects(t *testing.T) {
	set := parse(t, `[{"model": "*", "endpoint": "*:generateContent",
		"set": {"/generationConfig/temperature": 0, "/generationConfig/maxOutputTokens": 8192}}]`)
	e := "/v1beta/models/gemini-2.5-flash:generateContent"
	req := decode(t, `{"model": "gemini-2.5-flash", "contents": []}`)
	got := set.ApplyDefaults("/v1beta/models/gemini-2.5-flash:generateContent", req)
	if !reflect.DeepEqual(got, []string{"/generationConfig/maxOutputTokens", "/generationConfig/temperature"}) {
		t.Fatalf("applied %v", got)
	}
	if canon(t, req) != `{"contents":[],"generationConfig":{"maxOutputTokens":8192,"temperature":0},"model":"gemini-2.5-flash"}` {
		t.Fatalf("request %s", canon(t, req))
	}
	// An existing object is completed, its members kept.
	req = decode(t, `{"model": "gemini-2.5-flash", "generationConfig": {"temperature": 0.3}}`)
	if got := set.ApplyDefaults(provider.Endpoint(e), req); !reflect.DeepEqual(got, []string{"/generationConfig/maxOutputTokens"}) {
		t.Fatalf("applied %v", got)
	}
	// A parent that is not an object is left alone.
	req = decode(t, `{"model": "gemini-2.5-flash", "generationConfig": "x"}`)
	if got := set.ApplyDefaults(provider.Endpoint(e), req); got != nil {
		t.Fatalf("applied %v", got)
	}
}

func TestWhenConditions(t *testing.T) {
	set := parse(t, `[
		{"model": "claude*", "when": {"/thinking/type": "enabled"}, "set": {"/temperature": 1}},
		{"model": "claude*", "set": {"/temperature": 0}}
	]`)
	req := decode(t, `{"model": "claude-sonnet-4-5", "thinking": {"type": "enabled", "budget_tokens": 2048}}`)
	set.ApplyDefaults("/v1/messages", req)
	if canon(t, req["temperature"]) != "1" {
		t.Fatalf("thinking: temperature %v", req["temperature"])
	}
	req = decode(t, `{"model": "claude-sonnet-4-5", "thinking": {"type": "disabled"}}`)
	set.ApplyDefaults("/v1/messages", req)
	if canon(t, req["temperature"]) != "0" {
		t.Fatalf("no thinking: temperature %v", req["temperature"])
	}
}

func TestParseRefusesBadRules(t *testing.T) {
	for _, c := range []struct{ config, want string }{
		{`{}`, "/defaults: must be an array"},
		{`[{"set": {"/temperature": 0}}]`, "/defaults/0/model: is required"},
		{`[{"model": "[x", "set": {"/temperature": 0}}]`, "/defaults/0/model: bad glob"},
		{`[{"model": "*"}]`, "/defaults/0/set: is required"},
		{`[{"model": "*", "set": {"temperature": 0}}]`, "is not a JSON pointer"},
		{`[{"model": "*", "set": {"/model": "x"}}]`, "/model cannot be a default"},
		{`[{"model": "*", "set": {"/stream_options/include_usage": true}}]`, "cannot be a default"},
		{`[{"model": "*", "set": {"/seed": null}}]`, "cannot be null"},
		{`[{"model": "*", "set": {"/a": {}, "/a/b": 1}}]`, "/a/b is inside /a"},
		{`[{"model": "*", "extra": 1, "set": {"/seed": 1}}]`, `unknown field "extra"`},
		{`[{"model": "*", "when": [], "set": {"/seed": 1}}]`, "/defaults/0/when: must be an object"},
	} {
		v, err := snapshot.Decode([]byte(c.config))
		if err != nil {
			t.Fatal(err)
		}
		_, err = defaults.Parse(v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", c.config, err, c.want)
		}
	}
}

func TestEditRawKeepsTheAppsBytes(t *testing.T) {
	for _, c := range []struct {
		raw, config, want string
	}{
		{
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`,
			`[{"model": "*", "set": {"/temperature": 0, "/max_completion_tokens": 4096}}]`,
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":4096,"temperature":0}`,
		},
		{ // pretty-printed, a key with an escape, a null replaced, nested created
			"{\n  \"model\": \"gemini\",\n  \"x\\\"y\": [1, {\"z\": \"}\"}],\n  \"seed\": null\n}",
			`[{"model": "*", "set": {"/seed": 7, "/generationConfig/maxOutputTokens": 10}}]`,
			"{\n  \"model\": \"gemini\",\n  \"x\\\"y\": [1, {\"z\": \"}\"}],\n  \"seed\": 7,\"generationConfig\":{\"maxOutputTokens\":10}\n}",
		},
		{ // an existing parent object is completed in place
			`{"model":"m","options":{"temperature":0.5}}`,
			`[{"model": "*", "set": {"/options/num_predict": 64, "/options/temperature": 0}}]`,
			`{"model":"m","options":{"temperature":0.5,"num_predict":64}}`,
		},
		{ // an empty parent object, and a null parent
			`{"model":"m","options":{},"generationConfig":null}`,
			`[{"model": "*", "set": {"/options/seed": 1, "/generationConfig/seed": 2}}]`,
			`{"model":"m","options":{"seed":1},"generationConfig":{"seed":2}}`,
		},
	} {
		set := parse(t, c.config)
		req := decode(t, c.raw)
		applied := set.ApplyDefaults("/v1/chat/completions", req)
		vals, err := defaults.Values(req, applied)
		if err != nil {
			t.Fatal(err)
		}
		got, err := defaults.EditRaw([]byte(c.raw), applied, vals)
		if err != nil {
			t.Fatalf("EditRaw(%s): %v", c.raw, err)
		}
		if string(got) != c.want {
			t.Errorf("EditRaw(%s) =\n%s\nwant\n%s", c.raw, got, c.want)
		}
		// What is sent, decoded, is the request the defaults made.
		if canon(t, decode(t, string(got))) != canon(t, req) {
			t.Errorf("EditRaw(%s) decodes to %s, the request is %s", c.raw, got, canon(t, req))
		}
		if !json.Valid(got) {
			t.Errorf("EditRaw(%s) is not JSON", c.raw)
		}
	}
	if _, err := defaults.EditRaw([]byte(`{"temperature":1}`), []string{"/temperature"}, []any{0}); err == nil {
		t.Error("EditRaw over a present value: no error")
	}
}

func TestRestateAndOriginal(t *testing.T) {
	set := parse(t, `[{"model": "*", "set": {"/generationConfig/temperature": 0, "/generationConfig/maxOutputTokens": 8192}}]`)
	e := provider.Endpoint("/v1beta/models/g:generateContent")
	app := decode(t, `{"model": "g", "contents": []}`)
	stored := decode(t, `{"model": "g", "contents": []}`)
	applied := set.ApplyDefaults(e, stored)
	if canon(t, defaults.Original(stored, applied)) != canon(t, app) {
		t.Fatalf("Original = %s", canon(t, defaults.Original(stored, applied)))
	}
	if _, _, stale := defaults.Restate(set, e, stored, applied); stale {
		t.Fatal("stale under the same config")
	}
	changed := parse(t, `[{"model": "*", "set": {"/generationConfig/temperature": 0, "/generationConfig/maxOutputTokens": 100}}]`)
	now, nowApplied, stale := defaults.Restate(changed, e, stored, applied)
	if !stale || canon(t, now) != `{"contents":[],"generationConfig":{"maxOutputTokens":100,"temperature":0},"model":"g"}` || len(nowApplied) != 2 {
		t.Fatalf("Restate under a changed value: %s %v %v", canon(t, now), nowApplied, stale)
	}
	// A record made without defaults that a new rule would complete is stale too.
	if _, _, stale := defaults.Restate(set, e, app, nil); !stale {
		t.Fatal("a request the new rule completes is not stale")
	}
	// No config, no defaults_applied: never stale.
	if _, _, stale := defaults.Restate(nil, e, app, nil); stale {
		t.Fatal("stale without any defaults")
	}
}

func TestMark(t *testing.T) {
	rec := map[string]any{"id": "abc", "request": map[string]any{"model": "m"}}
	if err := defaults.Mark(rec, []string{"/seed", "/temperature"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(defaults.AppliedOf(rec), []string{"/seed", "/temperature"}) {
		t.Fatalf("AppliedOf = %v", defaults.AppliedOf(rec))
	}
	h, _ := rec["hash"].(string)
	if !strings.HasPrefix(h, "sha256:") {
		t.Fatalf("not rehashed: %v", rec["hash"])
	}
	if err := defaults.Mark(rec, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := rec[defaults.Field]; ok || rec["hash"] == h {
		t.Fatalf("Mark(nil) kept the field or the hash: %v", rec)
	}
}
