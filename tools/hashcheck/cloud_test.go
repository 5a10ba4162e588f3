package hashcheck_test

import (
	"bytes"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/azure"
	"github.com/traceforge/traceforge/internal/provider/vertex"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
)

// TestNodeAgreesOnCloudProviders: Vertex AI (Gemini's wire, and Claude's
// rawPredict with Anthropic's key rules and a two-turn lineage), Azure
// OpenAI (api-version in the endpoint, chat and Responses) and a named
// upstream's calls recorded through the proxy hash the same in Node.
func TestNodeAgreesOnCloudProviders(t *testing.T) {
	t.Parallel()
	node(t)
	p := startRecording(t, func(fake string, cfg *record.Config) {
		cfg.Upstreams = map[provider.Name]string{provider.OpenAI: fake + "/v1", vertex.Name: fake, azure.Name: fake}
		cfg.Named = map[string]string{"groq": fake + "/openai/v1"}
	})
	dir, srv, rec := p.dir, p.srv, p.rec
	do := func(path, body string, hdr ...string) {
		t.Helper()
		if status, b := p.send("POST", path, body, hdr...); status != 200 {
			t.Fatalf("%s: %d %s", path, status, b)
		}
	}
	const vx = "/v1/projects/p/locations/us-central1/publishers/"
	bearer := []string{"Authorization", "Bearer ya29.hashcheck"}
	do(vx+"google/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"seed":1,"maxOutputTokens":8}}`, bearer...)
	do(vx+"anthropic/models/claude-sonnet-4@20250514:rawPredict", `{"anthropic_version":"vertex-2023-10-16","system":"Be brief.","max_tokens":8,"temperature":0,"messages":[{"role":"user","content":"hi"}]}`, bearer...)
	do(vx+"anthropic/models/claude-sonnet-4@20250514:streamRawPredict", `{"anthropic_version":"vertex-2023-10-16","stream":true,"system":"Be brief.","max_tokens":8,"temperature":0,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Echo: hi"},{"role":"user","content":"again"}]}`, bearer...)
	do("/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":1,"max_tokens":8}`, "api-key", "k")
	do("/openai/v1/responses", `{"model":"gpt-4o","input":"hi","temperature":0,"max_output_tokens":16}`, "api-key", "k")
	do("/u/groq/v1/chat/completions", `{"model":"llama","messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":1,"max_tokens":8}`, "Authorization", "Bearer gsk")
	srv.Close()
	if s := rec.Finish(); s.Failed() {
		var b bytes.Buffer
		render.Record(&b, s, false)
		t.Fatalf("record failed:\n%s", b.String())
	}
	mustAgree(t, dir)
}
