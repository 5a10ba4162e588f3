// Package messages is the Anthropic Messages wire format (POST …/v1/messages,
// and — for clients whose base URL ends in /v1 — the same API under any
// prefix ending in /v1/messages).
package messages

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Format is the Messages format. The zero value is ready to use.
type Format struct{}

var _ provider.Format = Format{}

// New returns the Messages format.
func New() Format { return Format{} }

// Provider is Anthropic.
func (Format) Provider() provider.Name { return provider.Anthropic }

// Endpoint is /v1/messages.
func (Format) Endpoint() provider.Endpoint { return provider.Messages }

// Route owns POST paths ending in /v1/messages (so that OpenAI's
// /v1/threads/{id}/messages is not taken for it).
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || !strings.HasSuffix(path, "/v1/messages") {
		return "", false
	}
	return provider.Messages, true
}

// OwnsRecord: every stored Anthropic request is a Messages request.
func (Format) OwnsRecord(map[string]any) bool { return true }

// Streams iff the body has "stream": true.
func (Format) Streams(_ string, body map[string]any) bool { return provider.StreamFlag(body) }

// NormalizeStored drops explicit nulls on optional fields.
func (Format) NormalizeStored(request map[string]any) { provider.DropNullOptionals(request) }

// KeyRequest drops stream and stream_options, turns a string "system" and
// string message "content" into one text block, and renumbers tool_use ids
// and tool_result tool_use_ids to call_1, call_2, … in order of first
// appearance (DESIGN §4, §11).
func (Format) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	r := provider.WithoutStream(request)
	if s, ok := r["system"].(string); ok {
		r["system"] = textBlocks(s)
	}
	msgs, ok := r["messages"].([]any)
	if !ok {
		return r
	}
	ids := provider.NewRenumberer("call_")
	out := make([]any, len(msgs))
	for i, m := range msgs {
		msg, ok := m.(map[string]any)
		if !ok {
			out[i] = m
			continue
		}
		c := provider.CopyMap(msg)
		switch content := c["content"].(type) {
		case string:
			c["content"] = textBlocks(content)
		case []any:
			blocks := make([]any, len(content))
			for j, b := range content {
				blk, ok := b.(map[string]any)
				if !ok {
					blocks[j] = b
					continue
				}
				nb := provider.CopyMap(blk)
				if nb["type"] == "tool_use" {
					if id, ok := nb["id"]; ok {
						nb["id"] = ids.ID(id)
					}
				}
				if nb["type"] == "tool_result" {
					if id, ok := nb["tool_use_id"]; ok {
						nb["tool_use_id"] = ids.ID(id)
					}
				}
				blocks[j] = nb
			}
			c["content"] = blocks
		}
		out[i] = c
	}
	r["messages"] = out
	return r
}

func textBlocks(s string) []any {
	return []any{map[string]any{"type": "text", "text": s}}
}

// Fields: content = the text blocks joined, tool_calls = the tool_use
// blocks, finish_reason = stop_reason, tokens_used = input + output + cache
// creation + cache read tokens.
func (Format) Fields(body map[string]any) (snapshot.Fields, error) {
	return provider.Extract(provider.Anthropic, provider.Messages, body)
}

// NewAssembler applies message_start, content blocks and message_delta
// (provider.NewAssembler).
func (Format) NewAssembler() provider.Assembler {
	return provider.NewAssembler(provider.Anthropic, provider.Messages)
}

// StreamContentType is SSE.
func (Format) StreamContentType() string { return provider.SSEContentType }

// SynthesizeStream writes the typed `event:` stream (provider.SynthesizeStream);
// includeUsage is ignored: Anthropic streams always carry usage.
func (Format) SynthesizeStream(body map[string]any, includeUsage bool, w io.Writer, flush func()) error {
	return provider.SynthesizeStream(provider.Anthropic, provider.Messages, body, includeUsage, w, flush)
}

// SynthesizeBody builds a message (provider.SynthesizeBody).
func (Format) SynthesizeBody(snapshotID string, created time.Time, requestModel string, f snapshot.Fields) map[string]any {
	return provider.SynthesizeBody(provider.Anthropic, provider.Messages, snapshotID, created, requestModel, f)
}

// ErrorBody is {"type":"error","error":{"type","message"}}; code is unused.
func (Format) ErrorBody(typ, _, message string) []byte {
	return provider.MarshalOrdered("type", "error", "error", provider.Ordered("type", typ, "message", message))
}

// ErrorType maps a status to Anthropic's error types.
func (Format) ErrorType(status int) string {
	switch status {
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusBadGateway, http.StatusInternalServerError:
		return "api_error"
	}
	return "invalid_request_error"
}

// MissError is not_found_error (Anthropic errors have no code).
func (Format) MissError() (typ, code string) { return "not_found_error", "" }

// RequestSchema is the Messages request definition.
func (Format) RequestSchema() string { return "#/$defs/anthropicRequest" }
