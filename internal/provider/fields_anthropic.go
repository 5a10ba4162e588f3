package provider

import (
	"fmt"
	"strings"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// anthropicFields derives the response fields of a Messages answer into f
// (AnthropicWire.Fields).
func anthropicFields(body map[string]any, f *snapshot.Fields) error {
	blocks, ok := body["content"].([]any)
	if !ok {
		return fmt.Errorf("%w: /content is %s, not an array", ErrMalformed, TypeName(body["content"]))
	}
	var text strings.Builder
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /content/%d is %s, not an object", ErrMalformed, i, TypeName(b))
		}
		switch block["type"] {
		case "text":
			s, ok := block["text"].(string)
			if !ok {
				return fmt.Errorf("%w: /content/%d/text is %s, not a string", ErrMalformed, i, TypeName(block["text"]))
			}
			text.WriteString(s)
		case "tool_use":
			f.ToolCalls = append(f.ToolCalls, DeepCopy(block))
		}
	}
	f.Content = text.String()
	sr, ok := body["stop_reason"].(string)
	if !ok {
		return fmt.Errorf("%w: /stop_reason is %s, not a string", ErrMalformed, TypeName(body["stop_reason"]))
	}
	f.FinishReason = sr
	usage, err := UsageObject(body)
	if err != nil {
		return err
	}
	var total int64
	for _, k := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		v, present := usage[k]
		if !present || v == nil {
			continue
		}
		n, ok := AsInt(v)
		if !ok || n < 0 {
			return fmt.Errorf("%w: /usage/%s is %s, not an integer ≥ 0", ErrMalformed, k, TypeName(v))
		}
		total += n
	}
	f.TokensUsed = total
	f.Usage = usage
	return nil
}
