package fakeupstream

import (
	"strings"
	"testing"
)

const vertexModels = "/v1/projects/p/locations/us-central1/publishers/"

// TestVertex: Vertex AI's Gemini paths answer as the Gemini API with a
// bearer token (or an express-mode key), 401 UNAUTHENTICATED without;
// countTokens and predict have their own shapes; Claude's rawPredict is
// the Messages API with the model from the path and anthropic_version in
// the body.
func TestVertex(t *testing.T) {
	s := start(t, Options{})
	bearer := hdr{"Authorization": "Bearer ya29.fake"}
	resp, b := do(t, s.URL+vertexModels+"google/models/gemini-2.5-flash:generateContent", geminiBody, bearer)
	if resp.StatusCode != 200 || get(t, obj(t, b), "candidates", 0, "finishReason") != "STOP" {
		t.Fatalf("generateContent: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"google/models/gemini-2.5-flash:generateContent", geminiBody, nil)
	if resp.StatusCode != 401 || get(t, obj(t, b), "error", "status") != "UNAUTHENTICATED" {
		t.Fatalf("no token: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+"/v1/publishers/google/models/gemini-2.5-flash:generateContent?key=AIzaX", geminiBody, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("express: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"google/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiBody, bearer)
	if resp.StatusCode != 200 || !strings.Contains(geminiStreamText(t, geminiChunks(t, b)), "") || len(geminiChunks(t, b)) == 0 {
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"google/models/gemini-2.5-flash:countTokens", `{"contents":[{"role":"user","parts":[{"text":"one two three"}]}]}`, bearer)
	if resp.StatusCode != 200 || get(t, obj(t, b), "totalTokens") != float64(3) {
		t.Fatalf("countTokens: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"google/models/text-embedding-005:predict", `{"instances":[{"content":"hello world"}],"parameters":{"outputDimensionality":8}}`, bearer)
	if resp.StatusCode != 200 || len(get(t, obj(t, b), "predictions", 0, "embeddings", "values").([]any)) != 8 {
		t.Fatalf("predict: %d %s", resp.StatusCode, b)
	}
	const claude = `{"anthropic_version":"vertex-2023-10-16","max_tokens":20,"temperature":0,"messages":[{"role":"user","content":"Say hi"}]}`
	resp, b = do(t, s.URL+vertexModels+"anthropic/models/claude-sonnet-4@20250514:rawPredict", claude, bearer)
	m := obj(t, b)
	if resp.StatusCode != 200 || m["model"] != "claude-sonnet-4@20250514" || m["type"] != "message" {
		t.Fatalf("rawPredict: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"anthropic/models/claude-sonnet-4@20250514:streamRawPredict", strings.Replace(claude, `{`, `{"stream":true,`, 1), bearer)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "event: message_stop") {
		t.Fatalf("streamRawPredict: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"anthropic/models/c:rawPredict", `{"max_tokens":5,"messages":[]}`, bearer)
	if resp.StatusCode != 400 || get(t, obj(t, b), "type") != "error" {
		t.Fatalf("no anthropic_version: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+vertexModels+"anthropic/models/c:rawPredict", `{"model":"c","anthropic_version":"vertex-2023-10-16","max_tokens":5,"messages":[]}`, bearer)
	if resp.StatusCode != 400 {
		t.Fatalf("model in the body: %d %s", resp.StatusCode, b)
	}
}

// TestAzure: Azure OpenAI's routes answer as OpenAI's with api-key; a
// deployment route needs api-version (404 Resource not found).
func TestAzure(t *testing.T) {
	s := start(t, Options{})
	const chat = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":1}`
	key := hdr{"api-key": "azure-key"}
	resp, b := do(t, s.URL+"/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", chat, key)
	if resp.StatusCode != 200 || get(t, obj(t, b), "object") != "chat.completion" {
		t.Fatalf("deployment chat: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+"/openai/deployments/gpt-4o/chat/completions", chat, key)
	if resp.StatusCode != 404 || !strings.Contains(string(b), "Resource not found") {
		t.Fatalf("no api-version: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+"/openai/v1/chat/completions", chat, nil)
	if resp.StatusCode != 401 {
		t.Fatalf("no key: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+"/openai/v1/embeddings", `{"model":"text-embedding-3-small","input":"hi"}`, key)
	if resp.StatusCode != 200 {
		t.Fatalf("v1 embeddings: %d %s", resp.StatusCode, b)
	}
}
