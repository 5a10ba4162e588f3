// Package chat is the OpenAI chat completions wire format
// (POST …/chat/completions), also spoken by every OpenAI-compatible server.
// The response side (choices, chunks, errors, include_usage) is shared with
// the legacy completions format through provider.OpenAIWire.
package chat

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Format is the chat completions format; build it with New.
type Format struct {
	provider.OpenAIWire
}

var (
	_ provider.Format        = Format{}
	_ provider.UsageInjector = Format{}
)

// New returns the chat completions format.
func New() Format { return Format{provider.NewOpenAIWire(provider.ChatCompletions)} }

// Route owns POST paths ending in /chat/completions, with or without the
// /v1 segment and whatever prefix the base URL has.
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || !strings.HasSuffix(path, "/chat/completions") {
		return "", false
	}
	return provider.ChatCompletions, true
}

// OwnsRecord: a stored OpenAI request with "messages" is a chat request.
func (Format) OwnsRecord(request map[string]any) bool {
	_, ok := request["messages"]
	return ok
}

// KeyRequest drops stream and stream_options and renumbers tool-call ids
// (assistant tool_calls[].id, tool messages' tool_call_id) to call_1,
// call_2, … in order of first appearance (DESIGN §4).
func (Format) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	r := provider.WithoutStream(request)
	ids := provider.NewRenumberer("call_")
	provider.RewriteMessages(r, func(msg map[string]any) {
		if calls, ok := msg["tool_calls"].([]any); ok {
			msg["tool_calls"] = provider.RewriteEach(calls, func(call map[string]any) {
				if id, ok := call["id"]; ok {
					call["id"] = ids.ID(id)
				}
			})
		}
		if id, ok := msg["tool_call_id"]; ok {
			msg["tool_call_id"] = ids.ID(id)
		}
	})
	return r
}

// RecordSchema is the chat record definition.
func (Format) RecordSchema() string { return "#/$defs/chatRecord" }
