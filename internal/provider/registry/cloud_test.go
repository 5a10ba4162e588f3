package registry_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/azure"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/provider/vertex"
)

// TestCloudRoutes: Vertex AI's and Azure OpenAI's calls route to their
// providers — Azure's before OpenAI's, whose formats take any prefix —,
// api-version joins Azure's key endpoint (RouteURL), and a stored endpoint
// is found again by Lookup.
func TestCloudRoutes(t *testing.T) {
	const vx = "/v1/projects/p/locations/us-central1/publishers/"
	cases := []struct {
		url  string
		p    provider.Name
		e    provider.Endpoint
		strm bool
	}{
		{vx + "google/models/gemini-2.5-flash:generateContent", vertex.Name, vx + "google/models/gemini-2.5-flash:generateContent", false},
		{vx + "google/models/gemini-2.5-flash:streamGenerateContent?alt=sse", vertex.Name, vx + "google/models/gemini-2.5-flash:generateContent", true},
		{"/v1/publishers/google/models/gemini-2.5-flash:generateContent?key=AIzaX", vertex.Name, "/v1/publishers/google/models/gemini-2.5-flash:generateContent", false},
		{vx + "anthropic/models/claude-sonnet-4@20250514:streamRawPredict", vertex.Name, vx + "anthropic/models/claude-sonnet-4@20250514:rawPredict", true},
		{"/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", azure.Name, "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", false},
		{"/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21&x=1", azure.Name, "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", false},
		{"/openai/deployments/gpt-4o/chat/completions", azure.Name, "/openai/deployments/gpt-4o/chat/completions", false},
		{"/openai/deployments/davinci/completions?api-version=2024-10-21", azure.Name, "/openai/deployments/davinci/completions?api-version=2024-10-21", false},
		{"/openai/deployments/emb/embeddings?api-version=2024-10-21", azure.Name, "/openai/deployments/emb/embeddings?api-version=2024-10-21", false},
		{"/openai/v1/chat/completions", azure.Name, "/openai/v1/chat/completions", false},
		{"/openai/v1/responses?api-version=preview", azure.Name, "/openai/v1/responses?api-version=preview", false},
		{"/openai/v1/embeddings", azure.Name, "/openai/v1/embeddings", false},
		{"/v1/chat/completions?api-version=2024-10-21", provider.OpenAI, provider.ChatCompletions, false},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		f, e, ok := registry.RouteURL(http.MethodPost, u)
		if !ok || f.Provider() != c.p || e != c.e {
			t.Errorf("RouteURL(%s) = %v %q %v; want %s %q", c.url, f, e, ok, c.p, c.e)
			continue
		}
		if got := registry.Lookup(c.p, e); got != f {
			t.Errorf("Lookup(%s, %s) = %v, want %v", c.p, e, got, f)
		}
		body := map[string]any{}
		if c.strm && c.p == vertex.Name && f.Endpoint() != "" && u.Path[len(u.Path)-len("streamRawPredict"):] == "streamRawPredict" {
			body["stream"] = true
		}
		if got := f.Streams(u.Path, body); got != c.strm {
			t.Errorf("%s: Streams = %v", c.url, got)
		}
	}
	for _, path := range []string{vx + "google/models/m:computeTokens", "/v1beta1/projects/p/locations/l/endpoints/e:predict"} {
		if _, _, ok := registry.Route("POST", path); ok {
			t.Errorf("%s routed", path)
		}
		r, _ := http.NewRequest("POST", path, nil)
		if got := registry.UpstreamOf(r); got != vertex.Name {
			t.Errorf("UpstreamOf(%s) = %s, want vertex", path, got)
		}
	}
	r, _ := http.NewRequest("POST", "/openai/deployments/gpt-4o/audio/speech?api-version=2024-10-21", nil)
	if got := registry.UpstreamOf(r); got != azure.Name {
		t.Errorf("UpstreamOf(azure audio) = %s, want azure", got)
	}
}

// TestCloudKeys: api-version is part of Azure's key; Vertex AI keys a
// streamed call as its plain one, with the model from the path.
func TestCloudKeys(t *testing.T) {
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":1,"max_completion_tokens":5}`)
	key := func(raw string, b []byte) string {
		u, _ := url.Parse(raw)
		f, e, ok := registry.RouteURL("POST", u)
		if !ok {
			t.Fatalf("%s not routed", raw)
		}
		req, err := registry.ParseRouted(f, e, u.Path, http.Header{}, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return req.Key
	}
	a := key("/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", body)
	b := key("/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview", body)
	if a == b {
		t.Error("api-version is not part of the key")
	}
	const g = "/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:"
	gb := []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"maxOutputTokens":5}}`)
	if key(g+"generateContent", gb) != key(g+"streamGenerateContent?alt=sse", gb) {
		t.Error("a streamed generateContent keys differently")
	}
	u, _ := url.Parse(g + "generateContent")
	f, e, _ := registry.RouteURL("POST", u)
	req, err := registry.ParseRouted(f, e, u.Path, http.Header{}, gb, nil)
	if err != nil || req.Body["model"] != "gemini-2.5-flash" {
		t.Fatalf("model from the path: %v %v", err, req.Body["model"])
	}
}
