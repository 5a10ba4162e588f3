package registry_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func mustDecode(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := snapshot.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// ep is the key endpoint of a request by the format 1.0.0 rule.
func ep(p string, req map[string]any) provider.Endpoint { return registry.EndpointOf100(p, req) }

func canonicalKeyObject(t testing.TB, p string, req map[string]any) []byte {
	t.Helper()
	obj, err := registry.KeyObject(p, ep(p, req), req, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := snapshot.Canonical(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFormatDocWorkedKey checks the key object and key of the worked example
// in docs/format.md against the code.
func TestFormatDocWorkedKey(t *testing.T) {
	md, err := os.ReadFile("../../../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	re := regexp.MustCompile("(?s)```(?:json|text) (worked-[a-z-]+)\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(string(md), -1) {
		blocks[m[1]] = m[2]
	}
	file := mustDecode(t, blocks["worked-file"])
	rec := file["snapshots"].([]any)[0].(map[string]any)
	req := rec["request"].(map[string]any)
	if got, want := string(canonicalKeyObject(t, "openai", req)), strings.TrimSpace(blocks["worked-key-object"]); got != want {
		t.Errorf("key object:\n got %s\nwant %s", got, want)
	}
	key, _ := registry.RequestKey("openai", ep("openai", req), req, nil, nil)
	if want := strings.TrimSpace(blocks["worked-key"]); key != want || rec["id"] != snapshot.IDOf(key) {
		t.Errorf("key %s, id %v; doc says %s", key, rec["id"], want)
	}
}

func TestRequestKeyNormalization(t *testing.T) {
	a := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"stream":true,"stream_options":{"include_usage":true},
	  "messages":[{"role":"user","content":"hi"},
	   {"role":"assistant","content":null,"tool_calls":[{"id":"call_AbC","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_XyZ","type":"function","function":{"name":"g","arguments":"{}"}}]},
	   {"role":"tool","tool_call_id":"call_XyZ","content":"2"},{"role":"tool","tool_call_id":"call_AbC","content":"1"}]}`)
	b := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,
	  "messages":[{"role":"user","content":"hi"},
	   {"role":"assistant","content":null,"tool_calls":[{"id":"call_111","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_222","type":"function","function":{"name":"g","arguments":"{}"}}]},
	   {"role":"tool","tool_call_id":"call_222","content":"2"},{"role":"tool","tool_call_id":"call_111","content":"1"}]}`)
	ka, _ := registry.RequestKey("openai", ep("openai", a), a, nil, nil)
	kb, _ := registry.RequestKey("openai", ep("openai", b), b, nil, nil)
	if ka != kb {
		t.Errorf("streaming flags and provider tool-call ids changed the key: %s vs %s", ka, kb)
	}
	// Swapping which result answers which call must change the key.
	c := mustDecode(t, strings.Replace(strings.Replace(strings.Replace(`{"model":"m","temperature":0,"seed":1,"max_tokens":5,
	  "messages":[{"role":"user","content":"hi"},
	   {"role":"assistant","content":null,"tool_calls":[{"id":"A","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"B","type":"function","function":{"name":"g","arguments":"{}"}}]},
	   {"role":"tool","tool_call_id":"A","content":"2"},{"role":"tool","tool_call_id":"B","content":"1"}]}`, "\n", "", -1), "\t", "", -1), "  ", "", -1))
	kc, _ := registry.RequestKey("openai", ep("openai", c), c, nil, nil)
	if kc == ka {
		t.Error("results swapped between calls must give a different key")
	}
	// Anthropic string content and system equal their one-text-block form.
	s := mustDecode(t, `{"model":"c","max_tokens":9,"temperature":0,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}]}`)
	bl := mustDecode(t, `{"model":"c","max_tokens":9,"temperature":0,"system":[{"type":"text","text":"be brief"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`)
	ks, _ := registry.RequestKey("anthropic", ep("anthropic", s), s, nil, nil)
	kbl, _ := registry.RequestKey("anthropic", ep("anthropic", bl), bl, nil, nil)
	if ks != kbl {
		t.Error("anthropic string content must key like its one-block form")
	}
	kh, _ := registry.RequestKey("anthropic", ep("anthropic", s), s, map[string]any{"anthropic-version": "2023-06-01"}, nil)
	if kh == ks {
		t.Error("request_headers must join the key")
	}
	// The input is not modified.
	if _, ok := a["stream"]; !ok {
		t.Error("RequestKey modified its input")
	}
}

func TestKeyObjectMatchesDocumentedExample(t *testing.T) {
	req := mustDecode(t, `{"model":"gpt-4-turbo","messages":[{"role":"user","content":"Hello"}],"temperature":0,"max_tokens":100,"seed":42}`)
	b := canonicalKeyObject(t, "openai", req)
	want := `{"endpoint":"/v1/chat/completions","provider":"openai","request":{"max_tokens":100,"messages":[{"content":"Hello","role":"user"}],"model":"gpt-4-turbo","seed":42,"temperature":0}}`
	if string(b) != want {
		t.Errorf("key object = %s\nwant %s", b, want)
	}
	if f := registry.ForRecord("openai", mustDecode(t, `{"prompt":"x"}`)); f.Endpoint() != "/v1/completions" {
		t.Error("prompt requests use /v1/completions")
	}
}

func TestNormalizeStored(t *testing.T) {
	r := mustDecode(t, `{"model":"m","stop":"END","seed":null,"top_p":null,"messages":[]}`)
	registry.NormalizeStored("openai", ep("openai", r), r)
	if s, ok := r["stop"].([]any); !ok || len(s) != 1 || s[0] != "END" {
		t.Errorf("stop = %#v", r["stop"])
	}
	if _, ok := r["seed"]; ok {
		t.Error("null seed must become absent")
	}
	a := mustDecode(t, `{"stop":"x"}`)
	registry.NormalizeStored("anthropic", ep("anthropic", a), a)
	if _, ok := a["stop"].(string); !ok {
		t.Error("anthropic has no stop field mapping")
	}
}

func TestLineage(t *testing.T) {
	first := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"messages":[{"role":"user","content":"a"}]}`)
	second := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`)
	if _, _, ok, _ := registry.Lineage("openai", ep("openai", first), first, nil, nil); ok {
		t.Error("first turn has no lineage")
	}
	parent, turn, ok, err := registry.Lineage("openai", ep("openai", second), second, nil, nil)
	k1, _ := registry.RequestKey("openai", ep("openai", first), first, nil, nil)
	if err != nil || !ok || parent != snapshot.IDOf(k1) || turn != 2 {
		t.Errorf("lineage = %s %d %v %v, want %s 2", parent, turn, ok, err, snapshot.IDOf(k1))
	}
}

// TestKeyIsKeyObjectDigest: the key (written without building the key
// object) is the SHA-256 of the canonical key object, with and without
// stored headers, for every provider.
func TestKeyIsKeyObjectDigest(t *testing.T) {
	cases := []struct {
		p, endpoint, body string
		headers           map[string]any
	}{
		{"openai", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hé \"q\"\n"}],"stream":true}`, nil},
		{"anthropic", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			map[string]any{"anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024"}},
		{"gemini", "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, nil},
		{"ollama", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil},
	}
	for _, tc := range cases {
		req := mustDecode(t, tc.body)
		e := provider.Endpoint(tc.endpoint)
		if f := registry.Lookup(provider.Name(tc.p), e); f == nil {
			t.Fatalf("%s %s: no format", tc.p, e)
		}
		obj, err := registry.KeyObject(tc.p, e, req, tc.headers, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := snapshot.Canonical(obj)
		if err != nil {
			t.Fatal(err)
		}
		key, err := registry.RequestKey(tc.p, e, req, tc.headers, nil)
		if err != nil || "sha256:"+key != snapshot.SHA256Prefixed(c) {
			t.Errorf("%s: key %s (%v), SHA-256 of %s is %s", tc.p, key, err, c, snapshot.SHA256Prefixed(c))
		}
	}
}
