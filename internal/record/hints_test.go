package record

import (
	"strings"
	"testing"
)

// A call without a source gets a fix that names the library its
// User-Agent shows and the helper that fits it.
func TestSourceFixNamesTheClient(t *testing.T) {
	cases := []struct {
		ua, name, helper string
	}{
		{"OpenAI/JS 6.49.0", "a Node SDK", "traceforge-source"},
		{"Anthropic/JS 1.12.0", "a Node SDK", "traceforge-source"},
		{"ai-sdk/openai/3.0.141 runtime/node.js/20", "the Vercel AI SDK", "traceforgeFetch()"},
		{"ollama-js/0.5.16 (x64 linux Node.js/v20.20.2)", "the ollama npm package", "traceforge-source"},
		{"google-genai-sdk/1.30.0 gl-node/v20.20.2", "@google/genai", "traceforge-source"},
		{"OpenAI/Python 1.99.0", "a Python client", "traceforge_source.install(client)"},
		{"python-httpx/0.23.3", "a Python client", "-p traceforge_source"},
		{"OpenAI/Go 3.96.0", "a Go client", "traceforge.SourceTransport"},
		{"Go-http-client/1.1", "a Go client", "traceforge.SourceTransport"},
		{"google-genai-sdk/1.77.0 gl-go/go1.26.8", "a Go client", "traceforge.SourceTransport"},
		{"node", "Node's fetch", "traceforgeFetch()"},
	}
	for _, tc := range cases {
		fix := sourceFix(tc.ua)
		if !strings.Contains(fix, "came from "+tc.name+" (User-Agent "+tc.ua) || !strings.Contains(fix, tc.helper) {
			t.Errorf("User-Agent %q: fix %q does not name %q and %q", tc.ua, fix, tc.name, tc.helper)
		}
	}
	for _, ua := range []string{"", "curl/8.5.0"} {
		fix := sourceFix(ua)
		if strings.Contains(fix, "came from") {
			t.Errorf("User-Agent %q: fix guesses a library: %q", ua, fix)
		}
		for _, want := range []string{"traceforge.SourceTransport", "traceforge-source", "traceforge_source.install", "docs/sources.md"} {
			if !strings.Contains(fix, want) {
				t.Errorf("User-Agent %q: generic fix lacks %q: %q", ua, want, fix)
			}
		}
	}
}
