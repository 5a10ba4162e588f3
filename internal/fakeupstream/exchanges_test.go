package fakeupstream

import (
	"net/http"
	"testing"
)

// The count-tokens routes answer in their provider's shape, counting the
// words of the request's strings, and check their provider's credentials.
func TestCountTokens(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/responses/input_tokens", `{"model":"m","input":"three little words"}`, openAIAuth)
	if m := obj(t, b); get(t, m, "object") != "response.input_tokens" || get(t, m, "input_tokens") != 3.0 {
		t.Fatalf("openai: %s", b)
	}
	_, b = do(t, s.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"two words"}],"system":"be brief"}`, anthropicAuth)
	if m := obj(t, b); get(t, m, "input_tokens") != 4.0 || len(m) != 1 {
		t.Fatalf("anthropic: %s", b)
	}
	_, b = do(t, s.URL+"/v1beta/models/gemini-2.0-flash:countTokens", `{"contents":[{"role":"user","parts":[{"text":"one two three four five"}]}]}`, geminiAuth)
	if m := obj(t, b); get(t, m, "totalTokens") != 5.0 || get(t, m, "promptTokensDetails", 0, "tokenCount") != 5.0 {
		t.Fatalf("gemini: %s", b)
	}
	if resp, _ := do(t, s.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[]}`, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anthropic without a key: %d", resp.StatusCode)
	}
	if resp, _ := do(t, s.URL+"/v1beta/models/m:countTokens", `{}`, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("gemini without a key: %d", resp.StatusCode)
	}
	if resp, b := do(t, s.URL+"/v1/responses/input_tokens", `not json`, openAIAuth); resp.StatusCode != http.StatusBadRequest || get(t, obj(t, b), "error", "message") == nil {
		t.Fatalf("bad JSON: %d %s", resp.StatusCode, b)
	}
}
