package provider

import "strings"

// PartsText is the text of a message content given as an array of parts
// (Mistral and other OpenAI-compatible servers answer so, DESIGN §13.3):
// the "text" of every {"type": "text"} part, concatenated in order. Other
// parts (thinking, images, references) are not text of the answer; they
// stay in the body.
func PartsText(parts []any) string {
	var b strings.Builder
	for _, p := range parts {
		m, ok := p.(map[string]any)
		if !ok || m["type"] != "text" {
			continue
		}
		if s, ok := m["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

// contentParts accumulates a streamed chat content that arrives as arrays
// of parts (Mistral's thinking models): the parts in order, a string delta
// being a text part, and adjacent text parts merged into one — what the
// same answer holds when it is not streamed.
type contentParts struct {
	parts []any
}

// addText appends a string delta ("" adds nothing).
func (c *contentParts) addText(s string) {
	if s == "" {
		return
	}
	if n := len(c.parts); n > 0 {
		if last, ok := c.parts[n-1].(map[string]any); ok && last["type"] == "text" && len(last) == 2 {
			if prev, ok := last["text"].(string); ok {
				last["text"] = prev + s
				return
			}
		}
	}
	c.parts = append(c.parts, map[string]any{"type": "text", "text": s})
}

// add appends the parts of an array delta.
func (c *contentParts) add(parts []any) {
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok && m["type"] == "text" && len(m) == 2 {
			if s, ok := m["text"].(string); ok {
				c.addText(s)
				continue
			}
		}
		c.parts = append(c.parts, DeepCopy(p))
	}
}

// size is the text held (SizedAssembler).
func (c *contentParts) size() int {
	n := 0
	for _, p := range c.parts {
		if m, ok := p.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				n += len(s)
			}
		}
	}
	return n
}
