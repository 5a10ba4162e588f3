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
	ids := provider.NewRenumberer("call_")
	provider.RewriteMessages(r, func(msg map[string]any) {
		switch content := msg["content"].(type) {
		case string:
			msg["content"] = textBlocks(content)
		case []any:
			msg["content"] = provider.RewriteEach(content, func(block map[string]any) {
				switch block["type"] {
				case "tool_use":
					if id, ok := block["id"]; ok {
						block["id"] = ids.ID(id)
					}
				case "tool_result":
					if id, ok := block["tool_use_id"]; ok {
						block["tool_use_id"] = ids.ID(id)
					}
				}
			})
		}
	})
	return r
}

func textBlocks(s string) []any {
	return []any{map[string]any{"type": "text", "text": s}}
}

// Fields computes the normalized response fields from a final message (for
// a streamed call: the Assembler's result): content = the "text" blocks
// joined (thinking and tool blocks are not content), tool_calls = the
// tool_use blocks verbatim (nil when none), finish_reason = stop_reason,
// tokens_used = input_tokens + output_tokens + cache_creation_input_tokens +
// cache_read_input_tokens (each absent or null counting 0; no usage →
// provider.ErrNoUsage), usage verbatim, model. ToolCalls and Usage never
// alias body.
func (Format) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := provider.ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if err := extract(body, &f); err != nil {
		return snapshot.Fields{}, err
	}
	return f, nil
}

// NewAssembler returns the assembler of one Messages stream (see assembler).
func (Format) NewAssembler() provider.Assembler {
	return &assembler{blocks: map[int64]*blockState{}}
}

// LiveBody is the request without stream and stream_options.
func (Format) LiveBody(request map[string]any) map[string]any { return provider.WithoutStream(request) }

// StreamContentType is SSE.
func (Format) StreamContentType() string { return provider.SSEContentType }

// SynthesizeStream writes a Messages stream carrying body, deterministic
// (same body, same bytes), one Write (and flush) per event, written lazily
// in time linear in the body (provider.WriteLazily): a body that cannot be
// streamed returns an error (wrapping provider.ErrMalformed, or
// provider.ErrNoUsage without usage) with nothing written.
//
// Anthropic: `event:` lines on every event: message_start (the body without
// content, with stop_reason and stop_sequence null and usage.output_tokens at
// most 1), ping, per block content_block_start / content_block_delta /
// content_block_stop (text_delta pieces; tool_use and server_tool_use with
// input_json_delta pieces of the JSON-encoded input; thinking with
// thinking_delta pieces and one signature_delta; citations_delta per
// citation; other blocks whole in their start event), message_delta
// (stop_reason, stop_sequence, usage.output_tokens), message_stop.
// includeUsage is ignored: Anthropic streams always carry usage.
func (Format) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	return provider.WriteLazily(w, flush, func(e *provider.Emitter) error { return stream(body, e) })
}

// SynthesizeBody builds a message for a snapshot stored without a body
// (migrated from format 0.9.0), with the placeholders docs/format.md lists:
// id "msg_tf<snapshotID>", model f.Model else requestModel, a text block with
// f.Content (none when "") followed by f.ToolCalls as blocks, stop_sequence
// null, usage f.Usage else {"input_tokens": 0, "output_tokens":
// TokensUsed}. Fields of the result gives back f (tool calls that are not
// tool_use blocks are not part of Fields).
func (Format) SynthesizeBody(snapshotID string, _ time.Time, requestModel string, f snapshot.Fields) map[string]any {
	model := f.Model
	if model == "" {
		model = requestModel
	}
	var usage map[string]any
	if f.Usage != nil {
		usage = provider.DeepCopy(f.Usage).(map[string]any)
	}
	if usage == nil {
		usage = map[string]any{"input_tokens": provider.Num(0), "output_tokens": provider.Num(f.TokensUsed)}
	}
	content := []any{}
	if f.Content != "" {
		content = append(content, map[string]any{"type": "text", "text": f.Content})
	}
	for _, tc := range f.ToolCalls {
		content = append(content, provider.DeepCopy(tc))
	}
	return map[string]any{
		"id":            "msg_tf" + snapshotID,
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   f.FinishReason,
		"stop_sequence": nil,
		"usage":         usage,
	}
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

// Determinism: temperature 0; the Messages API has no seed.
func (Format) Determinism() (temperature, seed string) { return "/temperature", "" }

// RecordSchema is the Messages record definition.
func (Format) RecordSchema() string { return "#/$defs/messagesRecord" }
