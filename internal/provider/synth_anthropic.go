package provider

import (
	"encoding/json"
	"fmt"
	"sort"
)

// anthropicStream writes the events of a Messages stream carrying body through e
// (WriteLazily: a dry run checks, then every event is written as
// soon as it is built).
func anthropicStream(body map[string]any, e *Emitter) error {
	if body == nil {
		return fmt.Errorf("%w: no response body", ErrMalformed)
	}
	blocks, ok := body["content"].([]any)
	if !ok {
		return fmt.Errorf("%w: /content is %s, not an array", ErrMalformed, TypeName(body["content"]))
	}
	usage, ok := body["usage"].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: Anthropic streams need /usage", ErrNoUsage)
	}
	out, _ := AsInt(usage["output_tokens"])
	startUsage := DeepCopy(usage).(map[string]any)
	startUsage["output_tokens"] = Num(min(out, 1))

	// message_start: the body's members in the API's order, then the rest.
	var msg []any
	seen := map[string]bool{}
	for _, k := range []string{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"} {
		seen[k] = true
		switch k {
		case "content":
			msg = append(msg, k, []any{})
		case "stop_reason", "stop_sequence":
			msg = append(msg, k, nil)
		case "usage":
			msg = append(msg, k, startUsage)
		case "type":
			msg = append(msg, k, "message")
		case "role":
			r := body["role"]
			if r == nil {
				r = "assistant"
			}
			msg = append(msg, k, r)
		default:
			msg = append(msg, k, body[k])
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
		msg = append(msg, k, body[k])
	}

	if err := e.Named("message_start", Ordered("type", "message_start", "message", Ordered(msg...))); err != nil {
		return err
	}
	if err := e.Named("ping", Ordered("type", "ping")); err != nil {
		return err
	}
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /content/%d is %s, not an object", ErrMalformed, i, TypeName(b))
		}
		index := Num(int64(i))
		var js []byte
		if t := block["type"]; t == "tool_use" || t == "server_tool_use" {
			var err error
			if js, err = Marshal(block["input"]); err != nil {
				return fmt.Errorf("%w: /content/%d/input: %v", ErrMalformed, i, err)
			}
		}
		if e.Dry() {
			continue
		}
		start := DeepCopy(block).(map[string]any)
		switch block["type"] {
		case "text":
			start["text"] = ""
			if _, ok := block["citations"].([]any); ok {
				start["citations"] = []any{}
			}
		case "tool_use", "server_tool_use":
			start["input"] = map[string]any{}
		case "thinking":
			start["thinking"] = ""
			start["signature"] = ""
		case "compaction":
			// The summary arrives in one compaction_delta (DESIGN §13.3).
			start["content"] = nil
			if _, ok := block["encrypted_content"]; ok {
				start["encrypted_content"] = nil
			}
		}
		if err := e.Named("content_block_start", Ordered("type", "content_block_start", "index", index, "content_block", start)); err != nil {
			return err
		}
		deltaOf := func(d json.Marshaler) any {
			return Ordered("type", "content_block_delta", "index", index, "delta", d)
		}
		add := func(d json.Marshaler) error { return e.Named("content_block_delta", deltaOf(d)) }
		// pieces writes one delta of type typ per piece of s, in member.
		pieces := func(s string, n int, typ, member string) error {
			return e.NamedPieces("content_block_delta", s, n, func(p string) any {
				return deltaOf(Ordered("type", typ, member, p))
			})
		}
		switch block["type"] {
		case "text":
			text, _ := block["text"].(string)
			if cits, ok := block["citations"].([]any); ok {
				for _, c := range cits {
					if err := add(Ordered("type", "citations_delta", "citation", c)); err != nil {
						return err
					}
				}
			}
			if err := pieces(text, TextPiece, "text_delta", "text"); err != nil {
				return err
			}
		case "tool_use", "server_tool_use":
			if string(js) == "{}" || string(js) == "null" {
				if err := add(Ordered("type", "input_json_delta", "partial_json", "")); err != nil {
					return err
				}
			}
			if string(js) != "{}" {
				if err := pieces(string(js), ArgsPiece, "input_json_delta", "partial_json"); err != nil {
					return err
				}
			}
		case "thinking":
			thinking, _ := block["thinking"].(string)
			sig, _ := block["signature"].(string)
			if err := pieces(thinking, TextPiece, "thinking_delta", "thinking"); err != nil {
				return err
			}
			if err := add(Ordered("type", "signature_delta", "signature", sig)); err != nil {
				return err
			}
		case "compaction":
			d := ordered{{"type", "compaction_delta"}, {"content", block["content"]}}
			if enc, ok := block["encrypted_content"]; ok {
				d = append(d, kv{"encrypted_content", enc})
			}
			if err := add(d); err != nil {
				return err
			}
		}
		if err := e.Named("content_block_stop", Ordered("type", "content_block_stop", "index", index)); err != nil {
			return err
		}
	}
	if err := e.Named("message_delta", Ordered("type", "message_delta", "delta", Ordered("stop_reason", body["stop_reason"], "stop_sequence", body["stop_sequence"]), "usage", Ordered("output_tokens", Num(out)))); err != nil {
		return err
	}
	return e.Named("message_stop", Ordered("type", "message_stop"))
}
