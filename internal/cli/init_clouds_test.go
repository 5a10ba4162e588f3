package cli

import (
	"fmt"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/preset"
)

// TestPresetsCoverTheClouds: both presets complete the default calls of
// Vertex AI (Gemini and Claude, Claude with thinking at temperature 1) and
// Azure OpenAI (chat under a deployment and api-version, an o3 deployment
// at temperature 1, Responses), and an Azure chat request that sends
// max_tokens gets no max_completion_tokens beside it.
func TestPresetsCoverTheClouds(t *testing.T) {
	const vx = "/v1/projects/p/locations/us-east5/publishers/"
	str := func(v any) string { return fmt.Sprint(v) }
	for _, kind := range preset.Kinds {
		p, _ := preset.Get(kind)
		set, err := p.Set()
		if err != nil {
			t.Fatal(err)
		}
		apply := func(e string, req map[string]any) map[string]any {
			set.ApplyDefaults(provider.Endpoint(e), req)
			return req
		}
		g := apply(vx+"google/models/gemini-2.5-flash:generateContent", map[string]any{"model": "gemini-2.5-flash"})
		if gc, _ := g["generationConfig"].(map[string]any); gc["temperature"] == nil || gc["maxOutputTokens"] == nil {
			t.Errorf("%s: Vertex AI Gemini: %v", kind, g)
		}
		c := apply(vx+"anthropic/models/claude-sonnet-4@20250514:rawPredict", map[string]any{"model": "claude-sonnet-4@20250514"})
		if c["temperature"] == nil || c["max_tokens"] == nil {
			t.Errorf("%s: Vertex AI Claude: %v", kind, c)
		}
		c = apply(vx+"anthropic/models/claude-sonnet-4@20250514:rawPredict", map[string]any{"model": "claude-sonnet-4@20250514", "thinking": map[string]any{"type": "enabled"}})
		if str(c["temperature"]) != "1" {
			t.Errorf("%s: Vertex AI Claude with thinking: temperature %v, want 1", kind, c["temperature"])
		}
		a := apply("/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", map[string]any{"model": "gpt-4o"})
		if a["temperature"] == nil || a["max_completion_tokens"] == nil {
			t.Errorf("%s: Azure chat: %v", kind, a)
		}
		a = apply("/openai/deployments/o3/chat/completions?api-version=2024-10-21", map[string]any{"model": "o3"})
		if str(a["temperature"]) != "1" {
			t.Errorf("%s: Azure o3 chat: temperature %v, want 1", kind, a["temperature"])
		}
		a = apply("/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", map[string]any{"model": "gpt-4o", "max_tokens": 5})
		if _, both := a["max_completion_tokens"]; both {
			t.Errorf("%s: Azure chat with max_tokens got max_completion_tokens too", kind)
		}
		r := apply("/openai/v1/responses", map[string]any{"model": "gpt-4o"})
		if r["max_output_tokens"] == nil {
			t.Errorf("%s: Azure Responses: %v", kind, r)
		}
	}
}
