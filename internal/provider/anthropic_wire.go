package provider

import (
	"io"
	"net/http"
	"time"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// This file is the Anthropic Messages machinery that every provider serving
// Anthropic's wire shares (Anthropic's own /v1/messages,
// internal/provider/anthropic/messages; Claude on Vertex AI's
// :rawPredict, internal/provider/vertex): key rules, response fields, stream
// assembly and synthesis, body synthesis and the error shape. A format
// embeds AnthropicWire and adds what differs (Provider, Endpoint, Route,
// OwnsRecord, RecordSchema); formats never import each other.

// AnthropicWire implements the Format methods of Anthropic's Messages wire
// that do not depend on the route. The zero value is ready to use.
type AnthropicWire struct{}

// Streams iff the body has "stream": true.
func (AnthropicWire) Streams(_ string, body map[string]any) bool { return StreamFlag(body) }

// NormalizeStored drops explicit nulls on optional fields.
func (AnthropicWire) NormalizeStored(request map[string]any) { DropNullOptionals(request) }

// KeyRequest drops stream and stream_options, turns a string "system" and
// string message "content" into one text block, and renumbers tool_use ids
// and tool_result tool_use_ids to call_1, call_2, … in order of first
// appearance (DESIGN §4, §11).
func (AnthropicWire) KeyRequest(request map[string]any, _ *KeyContext) map[string]any {
	r := WithoutStream(request)
	if s, ok := r["system"].(string); ok {
		r["system"] = anthropicTextBlocks(s)
	}
	ids := NewRenumberer("call_")
	RewriteMessages(r, func(msg map[string]any) {
		switch content := msg["content"].(type) {
		case string:
			msg["content"] = anthropicTextBlocks(content)
		case []any:
			msg["content"] = RewriteEach(content, func(block map[string]any) {
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

func anthropicTextBlocks(s string) []any {
	return []any{map[string]any{"type": "text", "text": s}}
}

// Fields computes the normalized response fields from a final message (for
// a streamed call: the Assembler's result): content = the "text" blocks
// joined (thinking and tool blocks are not content), tool_calls = the
// tool_use blocks verbatim (nil when none), finish_reason = stop_reason,
// tokens_used = input_tokens + output_tokens + cache_creation_input_tokens +
// cache_read_input_tokens (each absent or null counting 0; no usage →
// ErrNoUsage), usage verbatim, model. ToolCalls and Usage never alias body.
func (AnthropicWire) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if err := anthropicFields(body, &f); err != nil {
		return snapshot.Fields{}, err
	}
	return f, nil
}

// NewAssembler returns the assembler of one Messages stream (see
// anthropicAssembler).
func (AnthropicWire) NewAssembler() Assembler {
	return &anthropicAssembler{blocks: map[int64]*anthropicBlock{}}
}

// LiveBody is the request without stream and stream_options.
func (AnthropicWire) LiveBody(request map[string]any) map[string]any { return WithoutStream(request) }

// StreamContentType is SSE.
func (AnthropicWire) StreamContentType() string { return SSEContentType }

// SynthesizeStream writes a Messages stream carrying body, deterministic
// (same body, same bytes), one Write (and flush) per event, written lazily
// in time linear in the body (WriteLazily): a body that cannot be streamed
// returns an error (wrapping ErrMalformed, or ErrNoUsage without usage)
// with nothing written.
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
func (AnthropicWire) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	return WriteLazily(w, flush, func(e *Emitter) error { return anthropicStream(body, e) })
}

// SynthesizeBody builds a message for a snapshot stored without a body
// (migrated from format 0.9.0), with the placeholders docs/format.md lists:
// id "msg_tf<snapshotID>", model f.Model else requestModel, a text block with
// f.Content (none when "") followed by f.ToolCalls as blocks, stop_sequence
// null, usage f.Usage else {"input_tokens": 0, "output_tokens":
// TokensUsed}. Fields of the result gives back f (tool calls that are not
// tool_use blocks are not part of Fields).
func (AnthropicWire) SynthesizeBody(snapshotID string, _ time.Time, requestModel string, f snapshot.Fields) map[string]any {
	model := f.Model
	if model == "" {
		model = requestModel
	}
	var usage map[string]any
	if f.Usage != nil {
		usage = DeepCopy(f.Usage).(map[string]any)
	}
	if usage == nil {
		usage = map[string]any{"input_tokens": Num(0), "output_tokens": Num(f.TokensUsed)}
	}
	content := []any{}
	if f.Content != "" {
		content = append(content, map[string]any{"type": "text", "text": f.Content})
	}
	for _, tc := range f.ToolCalls {
		content = append(content, DeepCopy(tc))
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
func (AnthropicWire) ErrorBody(typ, _, message string) []byte {
	return MarshalOrdered("type", "error", "error", Ordered("type", typ, "message", message))
}

// ErrorType maps a status to Anthropic's error types.
func (AnthropicWire) ErrorType(status int) string {
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
func (AnthropicWire) MissError() (typ, code string) { return "not_found_error", "" }

// Determinism: temperature 0; the Messages API has no seed.
func (AnthropicWire) Determinism() (temperature, seed string) { return "/temperature", "" }
