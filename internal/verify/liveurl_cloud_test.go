package verify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/azure"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/provider/vertex"
)

// TestLiveURLCloud: --live posts Azure OpenAI's stored endpoint with its
// api-version as the query (after the base URL's own), refuses without an
// Azure upstream naming the flag, and sends Vertex AI's calls to the
// endpoint's location once PrepareUpstream has filled the default host in.
func TestLiveURLCloud(t *testing.T) {
	o := LiveOptions{Upstreams: map[provider.Name]string{azure.Name: "https://res.openai.azure.com/?x=1", vertex.Name: ""}}
	u, err := liveURL(o, registry.Provider(azure.Name), "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21")
	if err != nil || u.String() != "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?x=1&api-version=2024-10-21" {
		t.Fatalf("azure: %v %v", u, err)
	}
	if _, err := liveURL(LiveOptions{}, registry.Provider(azure.Name), "/openai/v1/chat/completions"); err == nil || !strings.Contains(err.Error(), "--azure-upstream") {
		t.Fatalf("azure without an upstream: %v", err)
	}
	const e = "/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent"
	u, err = liveURL(o, registry.Provider(vertex.Name), e)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, "https://placeholder.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL = u
	if err := vertex.Descriptor.PrepareUpstream(req, nil); err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "https://europe-west4-aiplatform.googleapis.com"+e {
		t.Fatalf("vertex: %s", req.URL)
	}
}

// TestLiveURLNamed: a named upstream's snapshot is re-sent to the URL
// --upstream gives it, its path prefix kept; without one, the flag is named.
func TestLiveURLNamed(t *testing.T) {
	o := LiveOptions{Named: map[string]string{"groq": "https://api.groq.com/openai/v1"}}
	u, err := liveURL(o, registry.Provider(provider.OpenAI), "/u/groq/v1/chat/completions")
	if err != nil || u.String() != "https://api.groq.com/openai/v1/chat/completions" {
		t.Fatalf("named: %v %v", u, err)
	}
	if _, err := liveURL(o, registry.Provider(provider.OpenAI), "/u/together/v1/chat/completions"); err == nil || !strings.Contains(err.Error(), "--upstream together=URL") {
		t.Fatalf("unknown name: %v", err)
	}
}
