package provider

import (
	"bytes"
	"fmt"
	"io"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Piece sizes of synthesized streams, in runes.
const (
	TextPiece = 16
	ArgsPiece = 24
)

// SynthesizeStream writes an OpenAI SSE stream that carries body (a
// final response in the provider's non-streamed shape): what the replay
// server sends when a request has "stream": true. The stream is deterministic
// (same body, same bytes), every event ends with a blank line, and flush is
// called after each event. The whole stream is built before the first byte
// is written, so a body that cannot be streamed returns an error (wrapping
// ErrMalformed, or ErrNoUsage for an Anthropic body without usage) and writes
// nothing.
//
// OpenAI chat, per choice: a chunk with delta.role (and "content": "" or null,
// "refusal": null when the message has that key, and the choice's logprobs),
// content deltas of about 16 runes cut after whitespace where possible,
// refusal deltas likewise, then per tool call a delta with index, id, type,
// function.name and empty arguments followed by argument pieces, then a chunk
// with an empty delta and the finish_reason. With includeUsage every chunk
// carries "usage": null and a usage-only chunk ("choices": []) follows.
// Last comes `data: [DONE]`. Every chunk repeats id, created, model,
// service_tier and system_fingerprint (the latter two when the body has
// them). Legacy completions: text chunks, then a chunk with "text": "" and
// the finish_reason, usage as above.
func (o OpenAIWire) SynthesizeStream(body map[string]any, includeUsage bool, w io.Writer, flush func()) error {
	events, err := openaiEvents(o.endpoint == Completions, body, includeUsage)
	if err != nil {
		return err
	}
	return WriteEvents(events, w, flush)
}

// WriteEvents writes each event with one Write, calling flush (when not nil)
// after each.
func WriteEvents(events [][]byte, w io.Writer, flush func()) error {
	for _, ev := range events {
		if _, err := w.Write(ev); err != nil {
			return err
		}
		if flush != nil {
			flush()
		}
	}
	return nil
}

// DataEvent is one SSE event with v as its data and no `event:` line.
func DataEvent(v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var out bytes.Buffer
	out.WriteString("data: ")
	out.Write(b)
	out.WriteString("\n\n")
	return out.Bytes(), nil
}

// NamedEvent is one SSE event with an `event:` line and v as its data.
func NamedEvent(name string, v any) ([]byte, error) {
	b, err := DataEvent(v)
	if err != nil {
		return nil, err
	}
	return append([]byte("event: "+name+"\n"), b...), nil
}

func openaiEvents(completions bool, body map[string]any, includeUsage bool) ([][]byte, error) {
	if body == nil {
		return nil, fmt.Errorf("%w: no response body", ErrMalformed)
	}
	choices, ok := body["choices"].([]any)
	if !ok {
		return nil, fmt.Errorf("%w: /choices is %s, not an array", ErrMalformed, TypeName(body["choices"]))
	}
	object := "chat.completion.chunk"
	if completions {
		object = "text_completion"
	}
	header := ordered{{"id", body["id"]}, {"object", object}, {"created", body["created"]}, {"model", body["model"]}}
	for _, k := range []string{"service_tier", "system_fingerprint"} {
		if v, ok := body[k]; ok {
			header = append(header, kv{k, v})
		}
	}
	chunk := func(choices []any, usage any) ordered {
		c := append(append(ordered{}, header...), kv{"choices", choices})
		if includeUsage {
			c = append(c, kv{"usage", usage})
		}
		return c
	}
	var objs []ordered
	for ci, c := range choices {
		cm, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: /choices/%d is %s, not an object", ErrMalformed, ci, TypeName(c))
		}
		index := cm["index"]
		if index == nil {
			index = Num(int64(ci))
		}
		finish := cm["finish_reason"]
		if completions {
			text, ok := cm["text"].(string)
			if !ok && cm["text"] != nil {
				return nil, fmt.Errorf("%w: /choices/%d/text is %s, not a string", ErrMalformed, ci, TypeName(cm["text"]))
			}
			lp := cm["logprobs"]
			for _, piece := range Pieces(text, TextPiece) {
				objs = append(objs, chunk([]any{ordered{{"text", piece}, {"index", index}, {"logprobs", lp}, {"finish_reason", nil}}}, nil))
				lp = nil
			}
			objs = append(objs, chunk([]any{ordered{{"text", ""}, {"index", index}, {"logprobs", lp}, {"finish_reason", finish}}}, nil))
			continue
		}
		msg, ok := cm["message"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: /choices/%d/message is %s, not an object", ErrMalformed, ci, TypeName(cm["message"]))
		}
		delta := func(d ordered, lp, fr any) ordered {
			return chunk([]any{ordered{{"index", index}, {"delta", d}, {"logprobs", lp}, {"finish_reason", fr}}}, nil)
		}
		role := msg["role"]
		if role == nil {
			role = "assistant"
		}
		content, _ := msg["content"].(string)
		first := ordered{{"role", role}, {"content", msg["content"]}}
		if msg["content"] == nil && msg["tool_calls"] == nil && msg["function_call"] == nil {
			first[1].v = ""
		}
		if _, ok := msg["refusal"]; ok {
			first = append(first, kv{"refusal", nil})
		}
		first[1].v = emptyIfString(first[1].v)
		objs = append(objs, delta(first, cm["logprobs"], nil))
		for _, piece := range Pieces(content, TextPiece) {
			objs = append(objs, delta(ordered{{"content", piece}}, nil, nil))
		}
		if r, ok := msg["refusal"].(string); ok {
			for _, piece := range Pieces(r, TextPiece) {
				objs = append(objs, delta(ordered{{"refusal", piece}}, nil, nil))
			}
		}
		if fc, ok := msg["function_call"].(map[string]any); ok {
			args, _ := fc["arguments"].(string)
			objs = append(objs, delta(ordered{{"function_call", ordered{{"name", fc["name"]}, {"arguments", ""}}}}, nil, nil))
			for _, piece := range Pieces(args, ArgsPiece) {
				objs = append(objs, delta(ordered{{"function_call", ordered{{"arguments", piece}}}}, nil, nil))
			}
		}
		if tc, present := msg["tool_calls"]; present && tc != nil {
			calls, ok := tc.([]any)
			if !ok {
				return nil, fmt.Errorf("%w: /choices/%d/message/tool_calls is %s, not an array", ErrMalformed, ci, TypeName(tc))
			}
			for ti, call := range calls {
				cm, ok := call.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%w: /choices/%d/message/tool_calls/%d is %s, not an object", ErrMalformed, ci, ti, TypeName(call))
				}
				kind, field := "function", "arguments"
				if _, ok := cm["custom"].(map[string]any); ok {
					kind, field = "custom", "input"
				}
				fn, _ := cm[kind].(map[string]any)
				args, _ := fn[field].(string)
				typ := cm["type"]
				if typ == nil {
					typ = kind
				}
				start := ordered{{"index", Num(int64(ti))}, {"id", cm["id"]}, {"type", typ}, {kind, ordered{{"name", fn["name"]}, {field, ""}}}}
				objs = append(objs, delta(ordered{{"tool_calls", []any{start}}}, nil, nil))
				for _, piece := range Pieces(args, ArgsPiece) {
					more := ordered{{"index", Num(int64(ti))}, {kind, ordered{{field, piece}}}}
					objs = append(objs, delta(ordered{{"tool_calls", []any{more}}}, nil, nil))
				}
			}
		}
		objs = append(objs, delta(ordered{}, nil, finish))
	}
	if includeUsage {
		if u, ok := body["usage"]; ok && u != nil {
			objs = append(objs, chunk([]any{}, u))
		}
	}
	events := make([][]byte, 0, len(objs)+1)
	for _, o := range objs {
		ev, err := DataEvent(o)
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return append(events, []byte("data: [DONE]\n\n")), nil
}

func emptyIfString(v any) any {
	if _, ok := v.(string); ok {
		return ""
	}
	return v
}

// Pieces cuts s into deterministic pieces of at most n runes, after the
// last whitespace of a window where there is one. "" gives no pieces.
func Pieces(s string, n int) []string {
	var out []string
	for s != "" {
		if utf8.RuneCountInString(s) <= n {
			out = append(out, s)
			break
		}
		cut, count, lastSpace := 0, 0, -1
		for i, r := range s {
			if count == n {
				cut = i
				break
			}
			count++
			if unicode.IsSpace(r) && count > 1 {
				lastSpace = i + utf8.RuneLen(r)
			}
		}
		if lastSpace > 0 {
			cut = lastSpace
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// SynthesizeBody builds a full non-streamed response body for a snapshot that
// has no stored body (one migrated from format 0.9.0), from its normalized
// fields. The placeholders, which reports mark as "synthesized":
//
//   - id: "chatcmpl-tf<snapshotID>" (chat), "cmpl-tf<snapshotID>"
//     (completions);
//   - created: created (the snapshot's timestamp) in Unix seconds;
//   - model: f.Model, else requestModel;
//   - usage: f.Usage when present, else {"total_tokens": TokensUsed};
//   - one choice (index 0, logprobs null, role "assistant", refusal null) whose
//     content is f.Content (null when it is "" and there are tool calls) and
//     whose tool_calls are f.ToolCalls.
//
// Fields of the result gives back f.
func (o OpenAIWire) SynthesizeBody(snapshotID string, created time.Time, requestModel string, f snapshot.Fields) map[string]any {
	model := f.Model
	if model == "" {
		model = requestModel
	}
	var usage map[string]any
	if f.Usage != nil {
		usage = DeepCopy(f.Usage).(map[string]any)
	}
	if usage == nil {
		usage = map[string]any{"total_tokens": Num(f.TokensUsed)}
	}
	body := map[string]any{
		"created": Num(created.Unix()),
		"model":   model,
		"usage":   usage,
	}
	if o.endpoint == Completions {
		body["id"] = "cmpl-tf" + snapshotID
		body["object"] = "text_completion"
		body["choices"] = []any{map[string]any{
			"text": f.Content, "index": Num(0), "logprobs": nil, "finish_reason": f.FinishReason,
		}}
		return body
	}
	body["id"] = "chatcmpl-tf" + snapshotID
	body["object"] = "chat.completion"
	msg := map[string]any{"role": "assistant", "content": f.Content, "refusal": nil}
	if len(f.ToolCalls) > 0 {
		msg["tool_calls"] = DeepCopy(f.ToolCalls)
		if f.Content == "" {
			msg["content"] = nil
		}
	}
	body["choices"] = []any{map[string]any{
		"index": Num(0), "message": msg, "logprobs": nil, "finish_reason": f.FinishReason,
	}}
	return body
}
