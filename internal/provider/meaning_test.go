package provider_test

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestMeaningDiff(t *testing.T) {
	call := func(id, args string) any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": args}}
	}
	base := snapshot.Fields{Content: "Paris", FinishReason: "stop", TokensUsed: 10, Model: "gpt-4o-2024-08-06",
		Usage: map[string]any{"total_tokens": 10}, ToolCalls: []any{call("call_1", `{"city":"Paris","unit":"c"}`)}}
	same := []struct {
		name string
		mod  func(f *snapshot.Fields)
	}{
		{"usage counts", func(f *snapshot.Fields) {
			f.TokensUsed, f.Usage = 12, map[string]any{"total_tokens": 12, "prompt_tokens_details": map[string]any{"cached_tokens": 1024}}
		}},
		{"model snapshot name", func(f *snapshot.Fields) { f.Model = "gpt-4o-2024-11-20" }},
		{"tool call id and argument spelling", func(f *snapshot.Fields) {
			f.ToolCalls = []any{call("call_zz", "{\"unit\": \"c\",\n \"city\": \"Paris\"}")}
		}},
	}
	for _, c := range same {
		b := base
		c.mod(&b)
		if d := provider.MeaningDiff(base, b); len(d) != 0 {
			t.Errorf("%s: %v", c.name, d)
		}
	}
	differ := []struct {
		name, want string
		mod        func(f *snapshot.Fields)
	}{
		{"content", `content: "Paris" → "Lyon"`, func(f *snapshot.Fields) { f.Content = "Lyon" }},
		{"finish reason", `finish_reason: "stop" → "length"`, func(f *snapshot.Fields) { f.FinishReason = "length" }},
		{"argument value", `tool_calls[0]`, func(f *snapshot.Fields) { f.ToolCalls = []any{call("call_1", `{"city":"Lyon","unit":"c"}`)} }},
		{"argument text that is not JSON", `tool_calls[0]`, func(f *snapshot.Fields) { f.ToolCalls = []any{call("call_1", `{"city":"Paris","unit":"c"`)} }},
		{"one call more", `tool_calls: 1 → 2 calls`, func(f *snapshot.Fields) {
			f.ToolCalls = []any{call("call_1", `{}`), call("call_2", `{}`)}
		}},
	}
	for _, c := range differ {
		b := base
		c.mod(&b)
		d := provider.MeaningDiff(base, b)
		if len(d) == 0 || !strings.Contains(strings.Join(d, "\n"), c.want) {
			t.Errorf("%s: %v, want %q", c.name, d, c.want)
		}
	}
}
