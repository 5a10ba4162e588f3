package registry_test

import (
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// TestNamedUpstreams: a call under /u/NAME/ is an OpenAI-wire call whose
// key endpoint carries the name, so the same request to two hosts is two
// snapshots; the stored endpoint is found again; defaults and usage read
// the endpoint without the name.
func TestNamedUpstreams(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":1}`)
	key := func(path string) (*provider.Request, provider.Format) {
		u, _ := url.Parse(path)
		f, e, ok := registry.RouteURL("POST", u)
		if !ok {
			t.Fatalf("%s not routed", path)
		}
		req, err := registry.ParseRouted(f, e, u.Path, http.Header{}, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		return req, f
	}
	plain, pf := key("/v1/chat/completions")
	groq, gf := key("/u/groq/v1/chat/completions")
	dmr, _ := key("/u/local-dmr/v1/chat/completions")
	if gf != pf || groq.Provider != provider.OpenAI || groq.Endpoint != "/u/groq/v1/chat/completions" {
		t.Fatalf("named call: %v %s %s", gf, groq.Provider, groq.Endpoint)
	}
	if plain.Key == groq.Key || groq.Key == dmr.Key {
		t.Error("the upstream's name is not part of the key")
	}
	if registry.Lookup(provider.OpenAI, groq.Endpoint) != gf || registry.Lookup(provider.Anthropic, groq.Endpoint) != nil {
		t.Error("Lookup of a named endpoint")
	}
	for path, want := range map[string]provider.Endpoint{
		"/u/together/v1/responses":     "/u/together/v1/responses",
		"/u/x/v1/embeddings":           "/u/x/v1/embeddings",
		"/u/x/chat/completions":        "/u/x/v1/chat/completions", // the canonical endpoint
		"/u/x/v1/messages":             "",                         // OpenAI's wire only
		"/u/Upper/v1/chat/completions": provider.ChatCompletions,   // not a name: any prefix, OpenAI's
	} {
		_, e, _ := registry.Route("POST", path)
		if e != want {
			t.Errorf("Route(%s) = %q, want %q", path, e, want)
		}
	}
	if registry.BaseEndpoint("/u/groq/v1/chat/completions") != provider.ChatCompletions || registry.BaseEndpoint("/v1/responses") != "/v1/responses" {
		t.Error("BaseEndpoint")
	}
	r, _ := http.NewRequest("GET", "/u/groq/v1/models", nil)
	if registry.UpstreamOf(r) != provider.OpenAI {
		t.Error("UpstreamOf a named path")
	}
	if got := registry.NamedEnv("127.0.0.1:9", []string{"groq", "local-dmr"}); !reflect.DeepEqual(got, []string{
		"TRACEFORGE_GROQ_BASE_URL=http://127.0.0.1:9/u/groq/v1",
		"TRACEFORGE_LOCAL_DMR_BASE_URL=http://127.0.0.1:9/u/local-dmr/v1",
	}) {
		t.Errorf("NamedEnv = %q", got)
	}
	for name, ok := range map[string]bool{"groq": true, "local-dmr": true, "x_1": true, "openai": false, "vertex": false, "Groq": false, "-x": false, "": false} {
		if err := registry.ValidUpstreamName(name); (err == nil) != ok {
			t.Errorf("ValidUpstreamName(%q) = %v", name, err)
		}
	}
}
