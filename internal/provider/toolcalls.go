package provider

// ToolCall is one stored tool call (response.tool_calls[i]) as the wire
// formats shape it: the tool's name and its arguments as the provider
// sent them — a JSON string for OpenAI chat function calls and Responses
// function_call items, the input string of OpenAI custom tool calls, an
// object for Anthropic tool_use, Gemini functionCall, Bedrock toolUse and
// Ollama calls. Provider ids (id, call_id, toolUseId) and Gemini's
// thoughtSignature are not part of it.
type ToolCall struct {
	Name      string
	Arguments any
	// Known is false for a shape no format stores; then Name is its "type"
	// and Arguments the whole call without its id fields.
	Known bool
}

// ToolCalls reads stored tool calls: OpenAI chat {function:{name,
// arguments}} and custom {custom:{name,input}}, Anthropic tool_use
// {name,input}, Responses function_call {name,arguments}, Gemini parts
// {functionCall:{name,args}}, Ollama {function:{name,arguments:{…}}},
// Bedrock Converse content blocks {toolUse:{toolUseId,name,input}}.
// A call that is not an object has the name "?" and itself as arguments.
func ToolCalls(calls []any) []ToolCall {
	out := make([]ToolCall, 0, len(calls))
	for _, c := range calls {
		m, ok := c.(map[string]any)
		if !ok {
			out = append(out, ToolCall{Name: "?", Arguments: c})
			continue
		}
		switch {
		case isObject(m["function"]):
			fn := m["function"].(map[string]any)
			out = append(out, ToolCall{Name: str(fn["name"]), Arguments: fn["arguments"], Known: true})
		case isObject(m["custom"]):
			cu := m["custom"].(map[string]any)
			out = append(out, ToolCall{Name: str(cu["name"]), Arguments: cu["input"], Known: true})
		case isObject(m["functionCall"]):
			fc := m["functionCall"].(map[string]any)
			out = append(out, ToolCall{Name: str(fc["name"]), Arguments: fc["args"], Known: true})
		case isObject(m["toolUse"]):
			tu := m["toolUse"].(map[string]any)
			out = append(out, ToolCall{Name: str(tu["name"]), Arguments: tu["input"], Known: true})
		case m["name"] != nil && (m["input"] != nil || m["arguments"] != nil):
			args := m["input"]
			if args == nil {
				args = m["arguments"]
			}
			out = append(out, ToolCall{Name: str(m["name"]), Arguments: args, Known: true})
		default:
			rest := make(map[string]any, len(m))
			for k, v := range m {
				if k != "id" && k != "call_id" {
					rest[k] = v
				}
			}
			out = append(out, ToolCall{Name: str(m["type"]), Arguments: rest})
		}
	}
	return out
}
