package provider_test

import (
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// Every stored tool-call shape gives its name and its arguments as sent.
func TestToolCalls(t *testing.T) {
	obj := map[string]any{"city": "Paris"}
	calls := []any{
		map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}, // OpenAI chat
		map[string]any{"id": "call_2", "type": "custom", "custom": map[string]any{"name": "sql", "input": "select 1"}},                         // OpenAI custom
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": obj},                                               // Anthropic
		map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_3", "name": "get_weather", "arguments": `{"city":"Paris"}`},     // Responses
		map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": obj}, "thoughtSignature": "c2ln"},                         // Gemini
		map[string]any{"function": map[string]any{"name": "get_weather", "arguments": obj}},                                                    // Ollama
		map[string]any{"type": "mystery", "id": "x", "call_id": "y", "payload": 1.0},
		"not an object",
	}
	want := []provider.ToolCall{
		{Name: "get_weather", Arguments: `{"city":"Paris"}`, Known: true},
		{Name: "sql", Arguments: "select 1", Known: true},
		{Name: "get_weather", Arguments: obj, Known: true},
		{Name: "get_weather", Arguments: `{"city":"Paris"}`, Known: true},
		{Name: "get_weather", Arguments: obj, Known: true},
		{Name: "get_weather", Arguments: obj, Known: true},
		{Name: "mystery", Arguments: map[string]any{"type": "mystery", "payload": 1.0}},
		{Name: "?", Arguments: "not an object"},
	}
	if got := provider.ToolCalls(calls); !reflect.DeepEqual(got, want) {
		t.Errorf("ToolCalls:\n got %#v\nwant %#v", got, want)
	}
}
