// Package completions is the OpenAI legacy completions wire format
// (POST …/completions with a single-string "prompt"). The response side
// (choices, chunks, errors, include_usage) is shared with the chat format
// through provider.OpenAIWire.
package completions

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Format is the legacy completions format; build it with New.
type Format struct {
	provider.OpenAIWire
}

var (
	_ provider.Format        = Format{}
	_ provider.UsageInjector = Format{}
)

// New returns the legacy completions format.
func New() Format { return Format{provider.NewOpenAIWire(provider.Completions)} }

// Route owns POST paths ending in /completions but not /chat/completions,
// with or without the /v1 segment and whatever prefix the base URL has.
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || !strings.HasSuffix(path, "/completions") || strings.HasSuffix(path, "/chat/completions") {
		return "", false
	}
	return provider.Completions, true
}

// OwnsRecord: a stored OpenAI request with "prompt" (and no "messages",
// which the chat format claims first) is a completions request.
func (Format) OwnsRecord(request map[string]any) bool {
	_, messages := request["messages"]
	_, prompt := request["prompt"]
	return prompt && !messages
}

// KeyRequest drops stream and stream_options; completions carry no tool
// calls to renumber.
func (Format) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	return provider.WithoutStream(request)
}

// RecordSchema is the completions record definition.
func (Format) RecordSchema() string { return "#/$defs/completionsRecord" }
