package registry_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/bedrock"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/provider/vertex"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// TestFormatsAreConsistent: every registered format routes its own key
// endpoint, is found again by Lookup, names a record schema definition
// that exists, and (provider, endpoint) pairs are unique.
func TestFormatsAreConsistent(t *testing.T) {
	defs, err := schema.DefNames("snapshot-file.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range registry.Formats() {
		id := string(f.Provider()) + " " + string(f.Endpoint())
		if seen[id] {
			t.Errorf("%s registered twice", id)
		}
		seen[id] = true
		if got, e, ok := registry.Route("POST", "/prefix"+string(f.Endpoint())); !ok || got != f || e != f.Endpoint() {
			t.Errorf("%s: Route of its own endpoint = %v %q %v", id, got, e, ok)
		}
		if _, ok := f.Route("GET", string(f.Endpoint())); ok {
			t.Errorf("%s: GET must not be routed", id)
		}
		if registry.Lookup(f.Provider(), f.Endpoint()) != f {
			t.Errorf("%s: Lookup does not find it", id)
		}
		ptr := f.RecordSchema()
		name, ok := strings.CutPrefix(ptr, "#/$defs/")
		if !ok || !slices.Contains(defs, name) || !schema.Has(ptr) {
			t.Errorf("%s: RecordSchema %q is not a definition of snapshot-file.schema.json", id, ptr)
		}
		if f.Provider() == provider.Gemini || f.Provider() == provider.Ollama || f.Provider() == bedrock.Name || f.Provider() == vertex.Name {
			continue // their own rules: TestNativeFormats, TestCloudRoutes
		}
		if f.StreamContentType() != provider.SSEContentType {
			t.Errorf("%s: format 1.0.0 formats stream SSE, got %q", id, f.StreamContentType())
		}
		req := map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true}}
		if live := f.LiveBody(req); len(live) != 1 || live["model"] != "m" || len(req) != 3 {
			t.Errorf("%s: LiveBody = %v (input now %v); want the request without stream fields", id, live, req)
		}
		// An SSE call streams iff "stream": true; embeddings never stream.
		wantStream := !strings.HasSuffix(string(f.Endpoint()), "/embeddings")
		if f.Streams("", map[string]any{"stream": true}) != wantStream || f.Streams("", map[string]any{"stream": "true"}) || f.Streams("", map[string]any{}) {
			t.Errorf("%s: streams iff \"stream\": true (embeddings never)", id)
		}
	}
	if registry.ForProvider("mistral") != nil || registry.ForRecord("mistral", nil) != nil || registry.Lookup(provider.OpenAI, provider.Messages) != nil {
		t.Error("unknown providers and pairs must give nil")
	}
	if _, err := registry.RequestKey("mistral", ep("mistral", map[string]any{}), map[string]any{}, nil, nil); err == nil {
		t.Error("RequestKey of an unknown provider must fail")
	}
}

// TestNativeFormats: Gemini streams by path (SSE), Ollama unless "stream":
// false (NDJSON); --live sends Ollama "stream": false and Gemini without the
// model its path carries (DESIGN §12.9 items 1 and 4).
func TestNativeFormats(t *testing.T) {
	gen, _, ok := registry.Route("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent")
	if !ok || !gen.Streams("/v1beta/models/gemini-2.5-flash:streamGenerateContent", map[string]any{}) || gen.StreamContentType() != provider.SSEContentType {
		t.Error("Gemini :streamGenerateContent streams SSE")
	}
	if live := gen.LiveBody(map[string]any{"model": "gemini-2.5-flash", "contents": []any{}}); len(live) != 1 || live["contents"] == nil {
		t.Errorf("Gemini LiveBody = %v; want the body without model", live)
	}
	chat, _, _ := registry.Route("POST", "/api/chat")
	if !chat.Streams("/api/chat", map[string]any{}) || chat.Streams("/api/chat", map[string]any{"stream": false}) || chat.StreamContentType() != provider.NDJSONContentType {
		t.Error("Ollama streams NDJSON unless \"stream\": false")
	}
	if live := chat.LiveBody(map[string]any{"model": "m", "stream": true}); live["stream"] != false || live["model"] != "m" {
		t.Errorf("Ollama LiveBody = %v; want stream false", live)
	}
	// Determinism: nested members, none for embeddings (DESIGN §12.2).
	for path, want := range map[string][2]string{
		"/v1beta/models/m:generateContent":    {"/generationConfig/temperature", "/generationConfig/seed"},
		"/v1beta/models/m:batchEmbedContents": {"", ""},
		"/api/chat":                           {"/options/temperature", "/options/seed"},
		"/api/generate":                       {"/options/temperature", "/options/seed"},
		"/api/embed":                          {"", ""},
	} {
		f, _, _ := registry.Route("POST", path)
		if temp, seed := f.Determinism(); [2]string{temp, seed} != want {
			t.Errorf("%s: Determinism = %q, %q; want %q", path, temp, seed, want)
		}
	}
}

// TestUsageInjectionIsACapability: only chat and completions (OpenAI's and
// Azure OpenAI's) let the proxy ask for usage (DESIGN §12.9 item 1), and IncludesUsage reads the option.
func TestUsageInjectionIsACapability(t *testing.T) {
	for _, f := range registry.Formats() {
		inj, ok := f.(provider.UsageInjector)
		e := string(f.Endpoint())
		want := strings.HasSuffix(e, "/chat/completions") || strings.HasSuffix(e, "/completions") && f.Provider() != vertex.Name
		if ok != want {
			t.Errorf("%s %s: UsageInjector = %v, want %v", f.Provider(), f.Endpoint(), ok, want)
		}
		if !ok {
			continue
		}
		if !inj.IncludesUsage(map[string]any{"stream_options": map[string]any{"include_usage": true}}) || inj.IncludesUsage(map[string]any{"stream": true}) {
			t.Errorf("%s: IncludesUsage", f.Endpoint())
		}
	}
}

// TestErrorTypes: the error type of every status traceforge answers itself,
// per provider (the record proxy's 502 is api_error for Anthropic).
func TestErrorTypes(t *testing.T) {
	oa, an := registry.ForProvider(provider.OpenAI), registry.ForProvider(provider.Anthropic)
	for status, want := range map[int][2]string{
		http.StatusBadRequest:            {"invalid_request_error", "invalid_request_error"},
		http.StatusForbidden:             {"invalid_request_error", "permission_error"},
		http.StatusNotFound:              {"invalid_request_error", "not_found_error"},
		http.StatusRequestEntityTooLarge: {"invalid_request_error", "request_too_large"},
		http.StatusInternalServerError:   {"server_error", "api_error"},
		http.StatusBadGateway:            {"server_error", "api_error"},
	} {
		if got := [2]string{oa.ErrorType(status), an.ErrorType(status)}; got != want {
			t.Errorf("status %d: %v, want %v", status, got, want)
		}
	}
	if typ, code := oa.MissError(); typ != "invalid_request_error" || code != "traceforge_snapshot_not_found" {
		t.Errorf("openai miss: %s %s", typ, code)
	}
	if typ, code := an.MissError(); typ != "not_found_error" || code != "" {
		t.Errorf("anthropic miss: %s %s", typ, code)
	}
}

// TestErrorFormat: a request that may not parse gets the error shape of its
// route, else Anthropic's with anthropic-version or a /messages path, else
// OpenAI's.
func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		method, path, version string
		want                  provider.Name
	}{
		{"POST", "/v1/chat/completions", "2023-06-01", provider.OpenAI},
		{"POST", "/v1/messages", "", provider.Anthropic},
		{"GET", "/v1/models", "2023-06-01", provider.Anthropic},
		{"POST", "/v1/threads/t/messages", "", provider.Anthropic},
		{"POST", "/v1/embeddings", "", provider.OpenAI},
	} {
		r, _ := http.NewRequest(c.method, "http://127.0.0.1"+c.path, nil)
		if c.version != "" {
			r.Header.Set("anthropic-version", c.version)
		}
		if got := registry.ErrorFormat(r).Provider(); got != c.want {
			t.Errorf("%s %s (%q): %s, want %s", c.method, c.path, c.version, got, c.want)
		}
	}
}

// TestParse: the route's format, the streaming and include_usage flags
// (read before the stored normalization), the stored normalization and the
// stored headers.
func TestParse(t *testing.T) {
	h := http.Header{}
	h.Add("anthropic-beta", "a")
	h.Add("anthropic-beta", "b")
	r, err := registry.Parse("POST", "/v1/chat/completions?x=1", h, []byte(`{"model":"m","messages":[],"stop":"END","seed":null,"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != registry.Lookup(provider.OpenAI, provider.ChatCompletions) || r.Endpoint != provider.ChatCompletions || !r.Stream || !r.IncludeUsage {
		t.Errorf("parsed %+v", r)
	}
	if s, _ := r.Body["stop"].([]any); len(s) != 1 || r.Body["seed"] != nil {
		t.Errorf("stored normalization not applied: %v", r.Body)
	}
	if _, ok := r.Body["seed"]; ok {
		t.Error("explicit null seed must be absent")
	}
	if r.Headers["anthropic-beta"] != "a,b" {
		t.Errorf("headers %v", r.Headers)
	}
	key, _ := registry.RequestKey("openai", ep("openai", r.Body), r.Body, r.Headers, nil)
	if key != r.Key || r.ID() != snapshot.IDOf(key) {
		t.Errorf("key %s, want %s", r.Key, key)
	}
}

// TestNewRecord: registry.NewRecord computes the id and the lineage.
func TestNewRecord(t *testing.T) {
	req := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`)
	rec, key, err := registry.NewRecord("openai", provider.ChatCompletions, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), sourceOf("a.go"), req, nil,
		snapshot.Response{Fields: snapshot.Fields{Content: "x", TokensUsed: 1, FinishReason: "stop"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	parent, turn, ok, _ := registry.Lineage("openai", ep("openai", req), req, nil, nil)
	lin, _ := rec["lineage"].(map[string]any)
	if !ok || rec["id"] != snapshot.IDOf(key) || lin["parent_id"] != parent || lin["turn"] != int64(turn) {
		t.Errorf("record %v, key %s", rec, key)
	}
	if !bytes.HasPrefix([]byte(key), []byte(rec["id"].(string))) {
		t.Error("id is the key prefix")
	}
}

func sourceOf(file string) source.Source { return source.Source{File: file, Line: 1, Function: "f"} }

// TestStoredEndpoint: a 1.1.0 record's format comes from its stored endpoint
// (ForStored), never from its body; the 1.0.0 rule (EndpointOf100) is only
// for migration; an endpoint no format owns is an error naming it.
func TestStoredEndpoint(t *testing.T) {
	prompt := map[string]any{"prompt": "x"}
	if f, err := registry.ForStored("openai", provider.ChatCompletions); err != nil || f.Endpoint() != provider.ChatCompletions {
		t.Errorf("ForStored(chat) = %v %v", f, err)
	}
	if e := registry.EndpointOf100("openai", prompt); e != provider.Completions {
		t.Errorf("EndpointOf100(prompt) = %q", e)
	}
	if e := registry.EndpointOf100("mistral", prompt); e != "" {
		t.Errorf("EndpointOf100(unknown provider) = %q", e)
	}
	if _, err := registry.ForStored("openai", "/v1/images"); err == nil || !strings.Contains(err.Error(), `"/v1/images"`) {
		t.Errorf("ForStored(unknown endpoint) = %v", err)
	}
	if _, err := registry.ForStored("anthropic", provider.ChatCompletions); err == nil {
		t.Error("an endpoint of another provider must not be found")
	}
	// The key follows the stored endpoint: a "prompt" body keyed as chat
	// differs from the same body keyed as completions.
	kc, _ := registry.RequestKey("openai", provider.ChatCompletions, prompt, nil, nil)
	kp, _ := registry.RequestKey("openai", provider.Completions, prompt, nil, nil)
	if kc == kp {
		t.Error("the endpoint must be part of the key")
	}
}
