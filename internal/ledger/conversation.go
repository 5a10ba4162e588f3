package ledger

import "github.com/valyala/fastjson"

// toolNames lists the names of the tools an answer called, from the
// provider's tool-call objects: OpenAI and Ollama function.name, Anthropic
// tool_use and Responses function_call name, Gemini functionCall.name.
func toolNames(calls *fastjson.Value) []string {
	var names []string
	for _, v := range calls.GetArray() {
		if v.Type() != fastjson.TypeObject {
			continue
		}
		name := "?"
		for _, path := range [][]string{{"function", "name"}, {"name"}, {"functionCall", "name"}} {
			if n, ok := stringOf(v.Get(path...)); ok && n != "" {
				name = n
				break
			}
		}
		names = append(names, name)
	}
	return names
}

// returnsToolResults reports whether a conversation (request messages,
// Responses input items or Gemini contents) carries tool results after its
// last assistant turn: OpenAI/Ollama role "tool", Anthropic tool_result
// blocks, Responses function_call_output items, Gemini functionResponse
// parts.
func returnsToolResults(items *fastjson.Value) bool {
	results := false
	for _, v := range items.GetArray() {
		item, ok := objectOf(v)
		if !ok {
			continue
		}
		// One pass over the item: role, type and its blocks.
		var role, typ string
		var blockResult bool
		item.Visit(func(key []byte, value *fastjson.Value) {
			switch string(key) {
			case "role":
				role, _ = stringOf(value)
			case "type":
				typ, _ = stringOf(value)
			case "content":
				blockResult = blockResult || hasBlock(value, func(b *fastjson.Value) bool {
					t, _ := stringOf(b.Get("type"))
					return t == "tool_result"
				})
			case "parts":
				blockResult = blockResult || hasBlock(value, func(b *fastjson.Value) bool {
					return b.Get("functionResponse") != nil
				})
			}
		})
		switch {
		case role == "assistant" || role == "model" || typ == "function_call":
			results = false
		case role == "tool" || role == "function" || typ == "function_call_output" || blockResult:
			results = true
		}
	}
	return results
}

// hasBlock reports whether blocks is an array with an object match accepts.
func hasBlock(blocks *fastjson.Value, match func(*fastjson.Value) bool) bool {
	for _, b := range blocks.GetArray() {
		if b.Type() == fastjson.TypeObject && match(b) {
			return true
		}
	}
	return false
}
