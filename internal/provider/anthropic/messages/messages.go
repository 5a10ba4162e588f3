// Package messages is the Anthropic Messages wire format (POST …/v1/messages
// under any prefix, and POST /messages: clients whose base URL ends in /v1,
// such as @ai-sdk/anthropic, post there when ANTHROPIC_BASE_URL is
// traceforge's root; DESIGN §12.2).
package messages

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Format is the Messages format: Anthropic's wire (provider.AnthropicWire,
// which Claude on Vertex AI shares) on Anthropic's routes. The zero value is
// ready to use.
type Format struct{ provider.AnthropicWire }

var (
	_ provider.Format       = Format{}
	_ provider.UpstreamPath = Format{}
)

// New returns the Messages format.
func New() Format { return Format{} }

// Provider is Anthropic.
func (Format) Provider() provider.Name { return provider.Anthropic }

// Endpoint is /v1/messages.
func (Format) Endpoint() provider.Endpoint { return provider.Messages }

// Route owns POST paths ending in /v1/messages (so that OpenAI's
// /v1/threads/{id}/messages is not taken for it) and POST /messages itself,
// the same endpoint for a client whose base URL already ends in /v1.
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || (path != bareMessages && !strings.HasSuffix(path, "/v1/messages")) {
		return "", false
	}
	return provider.Messages, true
}

// bareMessages is the path of a client whose base URL ends in /v1 while
// traceforge's ANTHROPIC_BASE_URL has none.
const bareMessages = "/messages"

// UpstreamPath forwards /messages as /v1/messages (the upstream base URL
// has no /v1); every other path as it is.
func (Format) UpstreamPath(path string) string {
	if path == bareMessages {
		return string(provider.Messages)
	}
	return path
}

// OwnsRecord: every stored Anthropic request is a Messages request.
func (Format) OwnsRecord(map[string]any) bool { return true }

// RecordSchema is the Messages record definition.
func (Format) RecordSchema() string { return "#/$defs/messagesRecord" }
