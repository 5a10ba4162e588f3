package registry_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// TestNativeRoutes: Gemini and Ollama routes, and /messages (a client whose
// base URL ends in /v1) keyed as /v1/messages.
func TestNativeRoutes(t *testing.T) {
	cases := []struct {
		path string
		p    provider.Name
		e    provider.Endpoint
	}{
		{"/v1beta/models/gemini-2.5-flash:generateContent", provider.Gemini, "/v1beta/models/gemini-2.5-flash:generateContent"},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=k", provider.Gemini, "/v1beta/models/gemini-2.5-flash:generateContent"},
		{"/v1/models/text-embedding-004:batchEmbedContents", provider.Gemini, "/v1/models/text-embedding-004:batchEmbedContents"},
		{"/api/chat", provider.Ollama, "/api/chat"},
		{"/api/generate", provider.Ollama, "/api/generate"},
		{"/api/embed", provider.Ollama, "/api/embed"},
		{"/messages", provider.Anthropic, provider.Messages},
	}
	for _, c := range cases {
		f, e, ok := registry.Route("POST", c.path)
		if !ok || f.Provider() != c.p || e != c.e {
			t.Errorf("Route(%s) = %v, %q, %v; want %s %s", c.path, f, e, ok, c.p, c.e)
		}
	}
	if _, _, ok := registry.Route("POST", "/v1/threads/t/messages"); ok {
		t.Error("OpenAI's thread messages are not Anthropic's")
	}
}

// TestUpstreamOf: DESIGN §12.9 item 8 for paths no format owns.
func TestUpstreamOf(t *testing.T) {
	cases := []struct {
		path   string
		header string
		want   provider.Name
	}{
		{"/api/tags", "", provider.Ollama},
		{"/v1beta/models", "", provider.Gemini},
		{"/v1alpha/cachedContents", "", provider.Gemini},
		{"/v1/models/gemini-2.5-flash:countTokens", "", provider.Gemini},
		{"/v1/files?key=AIzaFAKE", "", provider.Gemini},
		{"/v1/files", "x-goog-api-key", provider.Gemini},
		{"/v1/models", "anthropic-version", provider.Anthropic},
		{"/v1/models", "", provider.OpenAI},
		{"/v1/embeddings", "", provider.OpenAI},
		{"/v1beta/models/m:generateContent", "", provider.Gemini},
	}
	for _, c := range cases {
		r, _ := http.NewRequest("POST", "http://127.0.0.1"+c.path, nil)
		if c.header != "" {
			r.Header.Set(c.header, "x")
		}
		if got := registry.UpstreamOf(r); got != c.want {
			t.Errorf("UpstreamOf(%s, %q) = %s, want %s", c.path, c.header, got, c.want)
		}
	}
	r, _ := http.NewRequest("POST", "http://127.0.0.1/api/tags", nil)
	if registry.ErrorFormat(r).Provider() != provider.Ollama {
		t.Error("an unknown Ollama path gets Ollama's error shape")
	}
}

// TestUnknownPath: the refusal lists what is served and, when the path is
// one /v1 away from a route, the base-URL fix.
func TestUnknownPath(t *testing.T) {
	msg := registry.UnknownPath("POST", "/v1/files?x=1")
	for _, want := range []string{"POST /v1/files is not a call traceforge records", "…/v1/chat/completions", "…/v1/messages", "…/api/chat", ":generateContent"} {
		if !strings.Contains(msg, want) {
			t.Errorf("UnknownPath = %q; want it to mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "base URL") {
		t.Errorf("no /v1 hint expected: %q", msg)
	}
	if msg := registry.UnknownPath("POST", "/models/gemini-2.5-flash:generateContent"); !strings.Contains(msg, "/v1/models/gemini-2.5-flash:generateContent would be") || !strings.Contains(msg, "lacks /v1") {
		t.Errorf("missing /v1: %q", msg)
	}
	if msg := registry.UnknownPath("POST", "/v1/api/tags"); strings.Contains(msg, "base URL") {
		t.Errorf("/api/tags is no route either way: %q", msg)
	}
}

// TestParseGemini: the model comes from the path into the stored request
// (DESIGN §12.9 item 4), the key endpoint is the path's, the query (the
// key) is not part of anything stored, and a contradicting body model is
// refused.
func TestParseGemini(t *testing.T) {
	const body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"seed":1,"maxOutputTokens":8}}`
	a, err := registry.Parse("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIzaSECRET", http.Header{}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Stream || a.Provider != provider.Gemini || a.Body["model"] != "gemini-2.5-flash" || a.Endpoint != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Errorf("parsed %+v", a)
	}
	b, err := registry.Parse("POST", "/v1beta/models/gemini-2.5-flash:generateContent", http.Header{"X-Goog-Api-Key": {"other"}}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if a.Key != b.Key || b.Stream {
		t.Error("streamed and plain calls share one key whatever the key parameter")
	}
	c, err := registry.Parse("POST", "/v1/models/gemini-2.5-flash:generateContent", http.Header{}, []byte(body))
	if err != nil || c.Key == a.Key {
		t.Errorf("another API version is another endpoint: %v", err)
	}
	_, err = registry.Parse("POST", "/v1beta/models/gemini-2.5-flash:generateContent", nil, []byte(`{"model":"gemini-pro","contents":[]}`))
	if !errors.Is(err, provider.ErrBadRequest) || !strings.Contains(err.Error(), "gemini-2.5-flash") {
		t.Errorf("contradicting model: %v", err)
	}
}

// TestParseOllama: streams unless "stream": false; both key alike.
func TestParseOllama(t *testing.T) {
	a, err := registry.Parse("POST", "/api/chat", nil, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"temperature":0,"seed":1,"num_predict":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := registry.Parse("POST", "/api/chat", nil, []byte(`{"model":"m","stream":false,"messages":[{"role":"user","content":"hi"}],"options":{"temperature":0,"seed":1,"num_predict":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Stream || b.Stream || a.Key != b.Key {
		t.Errorf("stream %v/%v, keys equal %v", a.Stream, b.Stream, a.Key == b.Key)
	}
}
