package provider

import (
	"fmt"
	"strings"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Extract computes Fields from a final response body in the provider's
// non-streamed shape (for a streamed call: Assembler.Done's result).
//
//   - Content: OpenAI chat choices[0].message.content (null or absent → ""),
//     completions choices[0].text, Anthropic the concatenation of the "text"
//     blocks only (thinking and tool blocks are not content).
//   - TokensUsed: OpenAI usage.total_tokens; Anthropic input_tokens +
//     output_tokens + cache_creation_input_tokens + cache_read_input_tokens,
//     each absent or null counting 0. A body without usage → ErrNoUsage.
//   - FinishReason: choices[0].finish_reason or stop_reason; missing → error.
//   - ToolCalls: choices[0].message.tool_calls (OpenAI) or the tool_use
//     blocks (Anthropic), verbatim; nil when none.
//   - Usage: the usage object verbatim; Model: the body's "model".
//
// The returned ToolCalls and Usage are copies: they never alias body.
func Extract(p Name, e Endpoint, body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", ErrMalformed)
	}
	if !Valid(p, e) {
		return snapshot.Fields{}, fmt.Errorf("%w: unsupported provider/endpoint %q %q", ErrMalformed, p, e)
	}
	var f snapshot.Fields
	if m, ok := body["model"]; ok && m != nil {
		s, ok := m.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /model is %s, not a string", ErrMalformed, typeName(m))
		}
		f.Model = s
	}
	var err error
	if p == Anthropic {
		err = extractAnthropic(body, &f)
	} else {
		err = extractOpenAI(e, body, &f)
	}
	if err != nil {
		return snapshot.Fields{}, err
	}
	return f, nil
}

func extractOpenAI(e Endpoint, body map[string]any, f *snapshot.Fields) error {
	choices, ok := body["choices"].([]any)
	if !ok {
		return fmt.Errorf("%w: /choices is %s, not an array", ErrMalformed, typeName(body["choices"]))
	}
	if len(choices) == 0 {
		return fmt.Errorf("%w: /choices is empty", ErrMalformed)
	}
	c0, ok := choices[0].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: /choices/0 is %s, not an object", ErrMalformed, typeName(choices[0]))
	}
	if e == Completions {
		switch t := c0["text"].(type) {
		case string:
			f.Content = t
		case nil:
		default:
			return fmt.Errorf("%w: /choices/0/text is %s, not a string", ErrMalformed, typeName(t))
		}
	} else {
		msg, ok := c0["message"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /choices/0/message is %s, not an object", ErrMalformed, typeName(c0["message"]))
		}
		switch t := msg["content"].(type) {
		case string:
			f.Content = t
		case nil:
		default:
			return fmt.Errorf("%w: /choices/0/message/content is %s, not a string", ErrMalformed, typeName(t))
		}
		switch t := msg["tool_calls"].(type) {
		case []any:
			if len(t) > 0 {
				f.ToolCalls = deepCopy(t).([]any)
			}
		case nil:
		default:
			return fmt.Errorf("%w: /choices/0/message/tool_calls is %s, not an array", ErrMalformed, typeName(t))
		}
	}
	fr, ok := c0["finish_reason"].(string)
	if !ok {
		return fmt.Errorf("%w: /choices/0/finish_reason is %s, not a string", ErrMalformed, typeName(c0["finish_reason"]))
	}
	f.FinishReason = fr
	usage, err := usageObject(body)
	if err != nil {
		return err
	}
	total, ok := asInt(usage["total_tokens"])
	if !ok || total < 0 {
		return fmt.Errorf("%w: /usage/total_tokens is %s, not an integer ≥ 0", ErrMalformed, typeName(usage["total_tokens"]))
	}
	f.TokensUsed = total
	f.Usage = usage
	return nil
}

func extractAnthropic(body map[string]any, f *snapshot.Fields) error {
	blocks, ok := body["content"].([]any)
	if !ok {
		return fmt.Errorf("%w: /content is %s, not an array", ErrMalformed, typeName(body["content"]))
	}
	var text strings.Builder
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /content/%d is %s, not an object", ErrMalformed, i, typeName(b))
		}
		switch block["type"] {
		case "text":
			s, ok := block["text"].(string)
			if !ok {
				return fmt.Errorf("%w: /content/%d/text is %s, not a string", ErrMalformed, i, typeName(block["text"]))
			}
			text.WriteString(s)
		case "tool_use":
			f.ToolCalls = append(f.ToolCalls, deepCopy(block))
		}
	}
	f.Content = text.String()
	sr, ok := body["stop_reason"].(string)
	if !ok {
		return fmt.Errorf("%w: /stop_reason is %s, not a string", ErrMalformed, typeName(body["stop_reason"]))
	}
	f.FinishReason = sr
	usage, err := usageObject(body)
	if err != nil {
		return err
	}
	var total int64
	for _, k := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		v, present := usage[k]
		if !present || v == nil {
			continue
		}
		n, ok := asInt(v)
		if !ok || n < 0 {
			return fmt.Errorf("%w: /usage/%s is %s, not an integer ≥ 0", ErrMalformed, k, typeName(v))
		}
		total += n
	}
	f.TokensUsed = total
	f.Usage = usage
	return nil
}

func usageObject(body map[string]any) (map[string]any, error) {
	u, present := body["usage"]
	if !present || u == nil {
		return nil, ErrNoUsage
	}
	m, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /usage is %s, not an object", ErrMalformed, typeName(u))
	}
	return deepCopy(m).(map[string]any), nil
}
