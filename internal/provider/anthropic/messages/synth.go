package messages

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/traceforge/traceforge/internal/provider"
)

func events(body map[string]any) ([][]byte, error) {
	if body == nil {
		return nil, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	blocks, ok := body["content"].([]any)
	if !ok {
		return nil, fmt.Errorf("%w: /content is %s, not an array", provider.ErrMalformed, provider.TypeName(body["content"]))
	}
	usage, ok := body["usage"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: Anthropic streams need /usage", provider.ErrNoUsage)
	}
	out, _ := provider.AsInt(usage["output_tokens"])
	startUsage := provider.DeepCopy(usage).(map[string]any)
	startUsage["output_tokens"] = provider.Num(min(out, 1))

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

	type named struct {
		name string
		v    any
	}
	evs := []named{
		{"message_start", provider.Ordered("type", "message_start", "message", provider.Ordered(msg...))},
		{"ping", provider.Ordered("type", "ping")},
	}
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: /content/%d is %s, not an object", provider.ErrMalformed, i, provider.TypeName(b))
		}
		index := provider.Num(int64(i))
		start := provider.DeepCopy(block).(map[string]any)
		var deltas []any
		add := func(d json.Marshaler) {
			deltas = append(deltas, provider.Ordered("type", "content_block_delta", "index", index, "delta", d))
		}
		switch block["type"] {
		case "text":
			text, _ := block["text"].(string)
			start["text"] = ""
			if cits, ok := block["citations"].([]any); ok {
				start["citations"] = []any{}
				for _, c := range cits {
					add(provider.Ordered("type", "citations_delta", "citation", c))
				}
			}
			for _, piece := range provider.Pieces(text, provider.TextPiece) {
				add(provider.Ordered("type", "text_delta", "text", piece))
			}
		case "tool_use", "server_tool_use":
			start["input"] = map[string]any{}
			js, err := provider.Marshal(block["input"])
			if err != nil {
				return nil, fmt.Errorf("%w: /content/%d/input: %v", provider.ErrMalformed, i, err)
			}
			if string(js) == "{}" || string(js) == "null" {
				add(provider.Ordered("type", "input_json_delta", "partial_json", ""))
			}
			if string(js) != "{}" {
				for _, piece := range provider.Pieces(string(js), provider.ArgsPiece) {
					add(provider.Ordered("type", "input_json_delta", "partial_json", piece))
				}
			}
		case "thinking":
			thinking, _ := block["thinking"].(string)
			sig, _ := block["signature"].(string)
			start["thinking"] = ""
			start["signature"] = ""
			for _, piece := range provider.Pieces(thinking, provider.TextPiece) {
				add(provider.Ordered("type", "thinking_delta", "thinking", piece))
			}
			add(provider.Ordered("type", "signature_delta", "signature", sig))
		}
		evs = append(evs, named{"content_block_start", provider.Ordered("type", "content_block_start", "index", index, "content_block", start)})
		for _, d := range deltas {
			evs = append(evs, named{"content_block_delta", d})
		}
		evs = append(evs, named{"content_block_stop", provider.Ordered("type", "content_block_stop", "index", index)})
	}
	evs = append(evs,
		named{"message_delta", provider.Ordered("type", "message_delta", "delta", provider.Ordered("stop_reason", body["stop_reason"], "stop_sequence", body["stop_sequence"]), "usage", provider.Ordered("output_tokens", provider.Num(out)))},
		named{"message_stop", provider.Ordered("type", "message_stop")},
	)
	events := make([][]byte, 0, len(evs))
	for _, e := range evs {
		b, err := provider.NamedEvent(e.name, e.v)
		if err != nil {
			return nil, err
		}
		events = append(events, b)
	}
	return events, nil
}
