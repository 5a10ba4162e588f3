package provider

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Piece sizes of synthesized streams, in runes.
const (
	textPiece = 16
	argsPiece = 24
)

// SynthesizeStream writes a provider-correct SSE stream that carries body (a
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
func SynthesizeStream(p Name, e Endpoint, body map[string]any, includeUsage bool, w io.Writer, flush func()) error {
	var events [][]byte
	var err error
	switch {
	case p == OpenAI && (e == ChatCompletions || e == Completions):
		events, err = openaiEvents(e == Completions, body, includeUsage)
	case p == Anthropic && e == Messages:
		events, err = anthropicEvents(body)
	default:
		err = fmt.Errorf("%w: unsupported provider/endpoint %q %q", ErrMalformed, p, e)
	}
	if err != nil {
		return err
	}
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

func dataEvent(v any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var out bytes.Buffer
	out.WriteString("data: ")
	out.Write(b)
	out.WriteString("\n\n")
	return out.Bytes(), nil
}

func namedEvent(name string, v any) ([]byte, error) {
	b, err := dataEvent(v)
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
		return nil, fmt.Errorf("%w: /choices is %s, not an array", ErrMalformed, typeName(body["choices"]))
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
			return nil, fmt.Errorf("%w: /choices/%d is %s, not an object", ErrMalformed, ci, typeName(c))
		}
		index := cm["index"]
		if index == nil {
			index = num(int64(ci))
		}
		finish := cm["finish_reason"]
		if completions {
			text, ok := cm["text"].(string)
			if !ok && cm["text"] != nil {
				return nil, fmt.Errorf("%w: /choices/%d/text is %s, not a string", ErrMalformed, ci, typeName(cm["text"]))
			}
			lp := cm["logprobs"]
			for _, piece := range pieces(text, textPiece) {
				objs = append(objs, chunk([]any{ordered{{"text", piece}, {"index", index}, {"logprobs", lp}, {"finish_reason", nil}}}, nil))
				lp = nil
			}
			objs = append(objs, chunk([]any{ordered{{"text", ""}, {"index", index}, {"logprobs", lp}, {"finish_reason", finish}}}, nil))
			continue
		}
		msg, ok := cm["message"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: /choices/%d/message is %s, not an object", ErrMalformed, ci, typeName(cm["message"]))
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
		for _, piece := range pieces(content, textPiece) {
			objs = append(objs, delta(ordered{{"content", piece}}, nil, nil))
		}
		if r, ok := msg["refusal"].(string); ok {
			for _, piece := range pieces(r, textPiece) {
				objs = append(objs, delta(ordered{{"refusal", piece}}, nil, nil))
			}
		}
		if fc, ok := msg["function_call"].(map[string]any); ok {
			args, _ := fc["arguments"].(string)
			objs = append(objs, delta(ordered{{"function_call", ordered{{"name", fc["name"]}, {"arguments", ""}}}}, nil, nil))
			for _, piece := range pieces(args, argsPiece) {
				objs = append(objs, delta(ordered{{"function_call", ordered{{"arguments", piece}}}}, nil, nil))
			}
		}
		if tc, present := msg["tool_calls"]; present && tc != nil {
			calls, ok := tc.([]any)
			if !ok {
				return nil, fmt.Errorf("%w: /choices/%d/message/tool_calls is %s, not an array", ErrMalformed, ci, typeName(tc))
			}
			for ti, call := range calls {
				cm, ok := call.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%w: /choices/%d/message/tool_calls/%d is %s, not an object", ErrMalformed, ci, ti, typeName(call))
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
				start := ordered{{"index", num(int64(ti))}, {"id", cm["id"]}, {"type", typ}, {kind, ordered{{"name", fn["name"]}, {field, ""}}}}
				objs = append(objs, delta(ordered{{"tool_calls", []any{start}}}, nil, nil))
				for _, piece := range pieces(args, argsPiece) {
					more := ordered{{"index", num(int64(ti))}, {kind, ordered{{field, piece}}}}
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
		ev, err := dataEvent(o)
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

func anthropicEvents(body map[string]any) ([][]byte, error) {
	if body == nil {
		return nil, fmt.Errorf("%w: no response body", ErrMalformed)
	}
	blocks, ok := body["content"].([]any)
	if !ok {
		return nil, fmt.Errorf("%w: /content is %s, not an array", ErrMalformed, typeName(body["content"]))
	}
	usage, ok := body["usage"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: Anthropic streams need /usage", ErrNoUsage)
	}
	out, _ := asInt(usage["output_tokens"])
	startUsage := deepCopy(usage).(map[string]any)
	startUsage["output_tokens"] = num(min(out, 1))

	// message_start: the body's members in the API's order, then the rest.
	msg := ordered{}
	seen := map[string]bool{}
	for _, k := range []string{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"} {
		seen[k] = true
		switch k {
		case "content":
			msg = append(msg, kv{k, []any{}})
		case "stop_reason", "stop_sequence":
			msg = append(msg, kv{k, nil})
		case "usage":
			msg = append(msg, kv{k, startUsage})
		case "type":
			msg = append(msg, kv{k, "message"})
		case "role":
			r := body["role"]
			if r == nil {
				r = "assistant"
			}
			msg = append(msg, kv{k, r})
		default:
			msg = append(msg, kv{k, body[k]})
		}
	}
	rest := make([]string, 0)
	for k := range body {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		msg = append(msg, kv{k, body[k]})
	}

	type named struct {
		name string
		v    any
	}
	evs := []named{
		{"message_start", ordered{{"type", "message_start"}, {"message", msg}}},
		{"ping", ordered{{"type", "ping"}}},
	}
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: /content/%d is %s, not an object", ErrMalformed, i, typeName(b))
		}
		index := num(int64(i))
		start := deepCopy(block).(map[string]any)
		var deltas []any
		add := func(d ordered) {
			deltas = append(deltas, ordered{{"type", "content_block_delta"}, {"index", index}, {"delta", d}})
		}
		switch block["type"] {
		case "text":
			text, _ := block["text"].(string)
			start["text"] = ""
			if cits, ok := block["citations"].([]any); ok {
				start["citations"] = []any{}
				for _, c := range cits {
					add(ordered{{"type", "citations_delta"}, {"citation", c}})
				}
			}
			for _, piece := range pieces(text, textPiece) {
				add(ordered{{"type", "text_delta"}, {"text", piece}})
			}
		case "tool_use", "server_tool_use":
			start["input"] = map[string]any{}
			js, err := marshal(block["input"])
			if err != nil {
				return nil, fmt.Errorf("%w: /content/%d/input: %v", ErrMalformed, i, err)
			}
			if string(js) == "{}" || string(js) == "null" {
				add(ordered{{"type", "input_json_delta"}, {"partial_json", ""}})
			}
			if string(js) != "{}" {
				for _, piece := range pieces(string(js), argsPiece) {
					add(ordered{{"type", "input_json_delta"}, {"partial_json", piece}})
				}
			}
		case "thinking":
			thinking, _ := block["thinking"].(string)
			sig, _ := block["signature"].(string)
			start["thinking"] = ""
			start["signature"] = ""
			for _, piece := range pieces(thinking, textPiece) {
				add(ordered{{"type", "thinking_delta"}, {"thinking", piece}})
			}
			add(ordered{{"type", "signature_delta"}, {"signature", sig}})
		}
		evs = append(evs, named{"content_block_start", ordered{{"type", "content_block_start"}, {"index", index}, {"content_block", start}}})
		for _, d := range deltas {
			evs = append(evs, named{"content_block_delta", d})
		}
		evs = append(evs, named{"content_block_stop", ordered{{"type", "content_block_stop"}, {"index", index}}})
	}
	evs = append(evs,
		named{"message_delta", ordered{
			{"type", "message_delta"},
			{"delta", ordered{{"stop_reason", body["stop_reason"]}, {"stop_sequence", body["stop_sequence"]}}},
			{"usage", ordered{{"output_tokens", num(out)}}},
		}},
		named{"message_stop", ordered{{"type", "message_stop"}}},
	)
	events := make([][]byte, 0, len(evs))
	for _, e := range evs {
		b, err := namedEvent(e.name, e.v)
		if err != nil {
			return nil, err
		}
		events = append(events, b)
	}
	return events, nil
}

// pieces cuts s into deterministic pieces of at most n runes, after the
// last whitespace of a window where there is one. "" gives no pieces.
func pieces(s string, n int) []string {
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
//     (completions), "msg_tf<snapshotID>" (Anthropic);
//   - created: created (the snapshot's timestamp) in Unix seconds (OpenAI);
//   - model: f.Model, else requestModel;
//   - usage: f.Usage when present, else {"total_tokens": TokensUsed} (OpenAI)
//     or {"input_tokens": 0, "output_tokens": TokensUsed} (Anthropic);
//   - one choice (index 0, logprobs null, role "assistant", refusal null) whose
//     content is f.Content (null when it is "" and there are tool calls) and
//     whose tool_calls are f.ToolCalls; for Anthropic a text block with
//     f.Content (none when "") followed by f.ToolCalls as blocks, and
//     stop_sequence null.
//
// Extract of the result gives back f (for Anthropic, tool calls that are not
// tool_use blocks are not part of Fields).
func SynthesizeBody(p Name, e Endpoint, snapshotID string, created time.Time, requestModel string, f snapshot.Fields) map[string]any {
	model := f.Model
	if model == "" {
		model = requestModel
	}
	var usage map[string]any
	if f.Usage != nil {
		usage = deepCopy(f.Usage).(map[string]any)
	}
	if p == Anthropic {
		if usage == nil {
			usage = map[string]any{"input_tokens": num(0), "output_tokens": num(f.TokensUsed)}
		}
		content := []any{}
		if f.Content != "" {
			content = append(content, map[string]any{"type": "text", "text": f.Content})
		}
		for _, tc := range f.ToolCalls {
			content = append(content, deepCopy(tc))
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
	if usage == nil {
		usage = map[string]any{"total_tokens": num(f.TokensUsed)}
	}
	body := map[string]any{
		"created": num(created.Unix()),
		"model":   model,
		"usage":   usage,
	}
	if e == Completions {
		body["id"] = "cmpl-tf" + snapshotID
		body["object"] = "text_completion"
		body["choices"] = []any{map[string]any{
			"text": f.Content, "index": num(0), "logprobs": nil, "finish_reason": f.FinishReason,
		}}
		return body
	}
	body["id"] = "chatcmpl-tf" + snapshotID
	body["object"] = "chat.completion"
	msg := map[string]any{"role": "assistant", "content": f.Content, "refusal": nil}
	if len(f.ToolCalls) > 0 {
		msg["tool_calls"] = deepCopy(f.ToolCalls)
		if f.Content == "" {
			msg["content"] = nil
		}
	}
	body["choices"] = []any{map[string]any{
		"index": num(0), "message": msg, "logprobs": nil, "finish_reason": f.FinishReason,
	}}
	return body
}
