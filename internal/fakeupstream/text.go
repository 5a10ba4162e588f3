package fakeupstream

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// answer is what a call answers, independent of the wire format.
type answer struct {
	text      string // text answer (when calls is empty)
	truncated bool   // text cut at max_tokens
	calls     []toolCallSpec

	promptTokens     int
	completionTokens int
}

type toolCallSpec struct {
	id   string
	name string
	args string // JSON object text
}

func words(s string) int { return len(strings.Fields(s)) }

// textAnswer builds a text answer from base: prefix, truncation to maxTokens
// words, nondeterministic suffix.
func (c *call) textAnswer(base string, maxTokens int) answer {
	s := c.opts.ContentPrefix + base
	a := answer{}
	if maxTokens > 0 {
		if f := strings.Fields(s); len(f) > maxTokens {
			s = strings.Join(f[:maxTokens], " ")
			a.truncated = true
		}
	}
	if c.opts.Nondeterministic {
		s += fmt.Sprintf(" [run %d]", c.n)
	}
	a.text = s
	a.completionTokens = words(s)
	return a
}

// reply builds the answer every format gives: "The tool returned: …" after
// tool results; when toolTurn (tools given, the last message the user's) a
// call to the tool pick chooses (pick says false for "none"); else the echo
// of the last user text.
func (c *call) reply(results []string, lastUser string, toolTurn bool, pick func() (string, json.RawMessage, bool), maxTokens int) answer {
	if len(results) > 0 {
		return c.textAnswer(toolResultText(results), maxTokens)
	}
	if toolTurn {
		if name, schema, use := pick(); use {
			return c.toolAnswer(name, schema, lastUser, "call_")
		}
	}
	return c.textAnswer(echoText(lastUser), maxTokens)
}

func echoText(userText string) string { return "Echo: " + userText }

func toolResultText(results []string) string {
	return "The tool returned: " + strings.Join(results, "; ")
}

// toolAnswer builds one call (two when the prompt says "both") to the named
// tool with arguments built from its schema and the prompt.
func (c *call) toolAnswer(name string, schema json.RawMessage, prompt, idPrefix string) answer {
	cands := candidates(prompt)
	count := 1
	if hasWord(prompt, "both") {
		count = 2
	}
	a := answer{}
	for i := 0; i < count; i++ {
		word := cands[0]
		if i < len(cands) {
			word = cands[i]
		}
		args := buildArgs(schema, word)
		a.calls = append(a.calls, toolCallSpec{
			id:   fmt.Sprintf("%sfake%08d%d", idPrefix, c.n, i),
			name: name,
			args: args,
		})
		a.completionTokens += 1 + words(args)
	}
	return a
}

// candidates returns the capitalised words of the prompt after its first word
// (punctuation trimmed, "I" skipped), or the last word, or "unknown".
func candidates(prompt string) []string {
	f := strings.Fields(prompt)
	var out []string
	for i, w := range f {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if i == 0 || w == "" || w == "I" {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
			out = append(out, w)
		}
	}
	if len(out) > 0 {
		return out
	}
	for i := len(f) - 1; i >= 0; i-- {
		w := strings.TrimFunc(f[i], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w != "" {
			return []string{w}
		}
	}
	return []string{"unknown"}
}

func hasWord(s, word string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.EqualFold(w, word) {
			return true
		}
	}
	return false
}

type jsonSchema struct {
	Type       json.RawMessage            `json:"type"`
	Enum       []any                      `json:"enum"`
	Properties map[string]json.RawMessage `json:"properties"`
}

func schemaType(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		for _, t := range list {
			if t != "null" {
				return t
			}
		}
	}
	return ""
}

func schemaValue(raw json.RawMessage, word string, depth int) any {
	var s jsonSchema
	_ = json.Unmarshal(raw, &s)
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch schemaType(s.Type) {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{word}
	case "object":
		if depth > 4 {
			return map[string]any{}
		}
		return objectValue(s.Properties, word, depth+1)
	case "null":
		return nil
	}
	return word
}

func objectValue(props map[string]json.RawMessage, word string, depth int) map[string]any {
	out := map[string]any{}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out[k] = schemaValue(props[k], word, depth)
	}
	return out
}

// buildArgs returns the JSON arguments object for a tool schema.
func buildArgs(schema json.RawMessage, word string) string {
	var s jsonSchema
	_ = json.Unmarshal(schema, &s)
	return string(marshal(objectValue(s.Properties, word, 0), ""))
}

// contentText extracts the text of an OpenAI or Anthropic message content
// (a string or an array of parts/blocks). Tool results are included only
// when withToolResults.
func contentText(raw json.RawMessage, withToolResults bool) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text":
			out = append(out, p.Text)
		case "tool_result":
			if withToolResults {
				out = append(out, contentText(p.Content, false))
			}
		}
	}
	return strings.Join(out, " ")
}

// textPieces splits s where a whitespace run starts, so pieces concatenate
// back to s ("Echo: hi there" → "Echo:", " hi", " there").
func textPieces(s string) []string {
	var out []string
	start := 0
	prevSpace := true
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if sp && !prevSpace && i > start {
			out = append(out, s[start:i])
			start = i
		}
		prevSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// bytePieces splits s into pieces of about n bytes on rune boundaries.
func bytePieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := n
		if i >= len(s) {
			out = append(out, s)
			break
		}
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		if i == 0 {
			_, i = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// obfuscation is a deterministic stand-in for OpenAI's random stream padding.
func obfuscation(i int) string {
	const alphabet = "aZ3kQ9xL2mR7tV5bN8cW4yH6"
	k := 1 + (i*7)%13
	off := (i * 5) % len(alphabet)
	var b strings.Builder
	for j := 0; j < k; j++ {
		b.WriteByte(alphabet[(off+j)%len(alphabet)])
	}
	return b.String()
}
