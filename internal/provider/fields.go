package provider

import (
	"fmt"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Fields computes the normalized response fields from a final body in the
// OpenAI non-streamed shape (for a streamed call: the Assembler's result):
//
//   - Content: chat choices[0].message.content (null or absent → ""; an
//     array of parts, as Mistral answers, → the text of its "text" parts,
//     PartsText), completions choices[0].text;
//   - TokensUsed: usage.total_tokens; a body without usage → ErrNoUsage;
//   - FinishReason: choices[0].finish_reason; missing → error;
//   - ToolCalls: choices[0].message.tool_calls verbatim; nil when none;
//   - Usage: the usage object verbatim; Model: the body's "model".
//
// The returned ToolCalls and Usage are copies: they never alias body.
func (o OpenAIWire) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if err := extractOpenAI(o.endpoint, body, &f); err != nil {
		return snapshot.Fields{}, err
	}
	return f, nil
}

// ResponseModel starts the Fields of a final body: an error wrapping
// ErrMalformed for a missing body or a "model" that is not a string, else
// Fields with Model set (from a present, non-null "model").
func ResponseModel(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", ErrMalformed)
	}
	var f snapshot.Fields
	if m, ok := body["model"]; ok && m != nil {
		s, ok := m.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /model is %s, not a string", ErrMalformed, TypeName(m))
		}
		f.Model = s
	}
	return f, nil
}

func extractOpenAI(e Endpoint, body map[string]any, f *snapshot.Fields) error {
	choices, ok := body["choices"].([]any)
	if !ok {
		return fmt.Errorf("%w: /choices is %s, not an array", ErrMalformed, TypeName(body["choices"]))
	}
	if len(choices) == 0 {
		return fmt.Errorf("%w: /choices is empty", ErrMalformed)
	}
	c0, ok := choices[0].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: /choices/0 is %s, not an object", ErrMalformed, TypeName(choices[0]))
	}
	if e == Completions {
		switch t := c0["text"].(type) {
		case string:
			f.Content = t
		case nil:
		default:
			return fmt.Errorf("%w: /choices/0/text is %s, not a string", ErrMalformed, TypeName(t))
		}
	} else {
		msg, ok := c0["message"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /choices/0/message is %s, not an object", ErrMalformed, TypeName(c0["message"]))
		}
		switch t := msg["content"].(type) {
		case string:
			f.Content = t
		case []any:
			f.Content = PartsText(t) // Mistral's content parts (DESIGN §13.3)
		case nil:
		default:
			return fmt.Errorf("%w: /choices/0/message/content is %s, not a string or an array of parts", ErrMalformed, TypeName(t))
		}
		switch t := msg["tool_calls"].(type) {
		case []any:
			if len(t) > 0 {
				f.ToolCalls = DeepCopy(t).([]any)
			}
		case nil:
		default:
			return fmt.Errorf("%w: /choices/0/message/tool_calls is %s, not an array", ErrMalformed, TypeName(t))
		}
	}
	fr, ok := c0["finish_reason"].(string)
	if !ok {
		return fmt.Errorf("%w: /choices/0/finish_reason is %s, not a string", ErrMalformed, TypeName(c0["finish_reason"]))
	}
	f.FinishReason = fr
	usage, err := UsageObject(body)
	if err != nil {
		return err
	}
	total, ok := AsInt(usage["total_tokens"])
	if !ok || total < 0 {
		return fmt.Errorf("%w: /usage/total_tokens is %s, not an integer ≥ 0", ErrMalformed, TypeName(usage["total_tokens"]))
	}
	f.TokensUsed = total
	f.Usage = usage
	return nil
}

// UsageObject returns a copy of body's "usage" object; ErrNoUsage when it is
// absent or null.
func UsageObject(body map[string]any) (map[string]any, error) {
	u, present := body["usage"]
	if !present || u == nil {
		return nil, ErrNoUsage
	}
	m, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /usage is %s, not an object", ErrMalformed, TypeName(u))
	}
	return DeepCopy(m).(map[string]any), nil
}
