package ledger

import "github.com/buger/jsonparser"

// toolNames lists the names of the tools an answer called, from the
// provider's tool-call objects: OpenAI and Ollama function.name, Anthropic
// tool_use and Responses function_call name, Gemini functionCall.name.
func toolNames(calls []byte) []string {
	var names []string
	_, _ = jsonparser.ArrayEach(calls, func(v []byte, vt jsonparser.ValueType, _ int, _ error) {
		if vt != jsonparser.Object {
			return
		}
		for _, path := range [][]string{{"function", "name"}, {"name"}, {"functionCall", "name"}} {
			if n, err := jsonparser.GetString(v, path...); err == nil && n != "" {
				names = append(names, n)
				return
			}
		}
		names = append(names, "?")
	})
	return names
}

// returnsToolResults reports whether a conversation (request messages,
// Responses input items or Gemini contents) carries tool results after its
// last assistant turn: OpenAI/Ollama role "tool", Anthropic tool_result
// blocks, Responses function_call_output items, Gemini functionResponse
// parts.
func returnsToolResults(items []byte) bool {
	results := false
	_, _ = jsonparser.ArrayEach(items, func(v []byte, vt jsonparser.ValueType, _ int, _ error) {
		if vt != jsonparser.Object {
			return
		}
		// One pass over the item: role, type and its blocks.
		var role, typ string
		var blockResult bool
		_ = jsonparser.ObjectEach(v, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
			switch string(key) {
			case "role":
				role = string(value)
			case "type":
				typ = string(value)
			case "content":
				blockResult = blockResult || vt == jsonparser.Array && hasBlock(value, func(b []byte) bool {
					t, _ := jsonparser.GetString(b, "type")
					return t == "tool_result"
				})
			case "parts":
				blockResult = blockResult || vt == jsonparser.Array && hasBlock(value, func(b []byte) bool {
					_, _, _, err := jsonparser.Get(b, "functionResponse")
					return err == nil
				})
			}
			return nil
		})
		switch {
		case role == "assistant" || role == "model" || typ == "function_call":
			results = false
		case role == "tool" || role == "function" || typ == "function_call_output" || blockResult:
			results = true
		}
	})
	return results
}

func hasBlock(blocks []byte, match func([]byte) bool) bool {
	found := false
	_, _ = jsonparser.ArrayEach(blocks, func(b []byte, vt jsonparser.ValueType, _ int, _ error) {
		if !found && vt == jsonparser.Object && match(b) {
			found = true
		}
	})
	return found
}
