package ollama

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/traceforge/traceforge/internal/provider"
)

// shape says where a format's streamed members live: chat streams
// message.content / message.thinking / message.tool_calls, generate streams
// response / thinking at the top level.
type shape struct {
	message string // "message" for chat, "" for generate (top level)
	text    string // "content" or "response"
}

// assembler builds the stored body of an NDJSON stream (DESIGN §12.9 item
// 1): the `done: true` line, with the text member and "thinking"
// concatenated over every line and "tool_calls" collected in order. A member
// is in the result iff some line carried it. A line {"error": …} breaks the
// stream (provider.ErrStreamError); so does a stream without a done line.
// Lines after the done line are ignored.
type assembler struct {
	shape
	nd        provider.NDJSONParser
	err       error
	streamErr error
	done      map[string]any
	textBuf   []byte
	thinkBuf  []byte
	calls     []any
	has       map[string]bool
}

func newAssembler(s shape) *assembler { return &assembler{shape: s, has: map[string]bool{}} }

func (a *assembler) Write(p []byte) (int, error) {
	if a.err != nil {
		return len(p), a.err
	}
	if a.streamErr != nil || a.done != nil {
		return len(p), nil
	}
	if err := a.nd.Feed(p, a.line); err != nil {
		a.err = err
		return len(p), err
	}
	return len(p), nil
}

func (a *assembler) line(data []byte, num int) error {
	if a.streamErr != nil || a.done != nil {
		return nil
	}
	m, err := provider.Decode(data)
	if err != nil {
		return fmt.Errorf("line %d: %w", num, err)
	}
	if e, ok := m["error"]; ok {
		msg, _ := e.(string)
		if msg == "" {
			msg = "no message"
		}
		a.streamErr = fmt.Errorf("%w: %w: line %d: %s", provider.ErrBrokenStream, provider.ErrStreamError, num, msg)
		return nil
	}
	src, ptr := m, fmt.Sprintf("line %d", num)
	if a.message != "" {
		v, present := m[a.message]
		if present && v != nil {
			msg, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: %s: /%s is %s, not an object", provider.ErrMalformed, ptr, a.message, provider.TypeName(v))
			}
			src = msg
		} else {
			src = nil
		}
		ptr += ": /" + a.message
	}
	if src != nil {
		for _, k := range []string{a.text, "thinking"} {
			s, err := optString(src, k, ptr)
			if err != nil {
				return err
			}
			if _, ok := src[k]; ok {
				a.has[k] = true
			}
			if k == a.text {
				a.textBuf = append(a.textBuf, s...)
			} else {
				a.thinkBuf = append(a.thinkBuf, s...)
			}
		}
		if v, ok := src["tool_calls"]; ok && v != nil {
			calls, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%w: %s/tool_calls is %s, not an array", provider.ErrMalformed, ptr, provider.TypeName(v))
			}
			a.has["tool_calls"] = true
			a.calls = append(a.calls, calls...)
		}
	}
	if done, _ := m["done"].(bool); done {
		a.done = m
	}
	return nil
}

func (a *assembler) Done() (map[string]any, error) {
	if a.err == nil && a.streamErr == nil && a.done == nil {
		// A last line without its newline: complete if it parses, else
		// the stream was cut.
		if err := a.nd.Flush(a.line); err != nil {
			a.err = fmt.Errorf("%w: the last line is incomplete: %w", provider.ErrBrokenStream, err)
		}
	}
	if a.err != nil {
		return nil, a.err
	}
	if a.streamErr != nil {
		return nil, a.streamErr
	}
	if a.done == nil {
		return nil, fmt.Errorf("%w: no line with \"done\": true after %d lines", provider.ErrBrokenStream, a.nd.Lines())
	}
	body := provider.DeepCopy(a.done).(map[string]any)
	dst := body
	if a.message != "" {
		msg, _ := body[a.message].(map[string]any)
		if msg == nil {
			msg = map[string]any{}
			if a.has[a.text] || a.has["thinking"] || a.has["tool_calls"] {
				body[a.message] = msg
			}
		}
		dst = msg
	}
	if a.has[a.text] {
		dst[a.text] = string(a.textBuf)
	}
	if a.has["thinking"] {
		dst["thinking"] = string(a.thinkBuf)
	}
	if a.has["tool_calls"] {
		dst["tool_calls"] = provider.DeepCopy(append([]any{}, a.calls...))
	}
	return body, nil
}

// lines builds the NDJSON stream of a stored body, the way Ollama streams:
// a line per piece of thinking, then per piece of text, then one line with
// the tool calls, each {model, created_at, <member>, done: false}; then the
// done line: the body with its text member "" and without thinking and tool
// calls (kept there only when they are empty, so the stream assembles back
// to body).
func (s shape) lines(body map[string]any) ([][]byte, error) {
	if body == nil {
		return nil, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	src := body
	if s.message != "" {
		msg, ok := body[s.message].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: /%s is %s, not an object", provider.ErrMalformed, s.message, provider.TypeName(body[s.message]))
		}
		src = msg
	}
	text, err := optString(src, s.text, "")
	if err != nil {
		return nil, err
	}
	thinking, err := optString(src, "thinking", "")
	if err != nil {
		return nil, err
	}
	calls, _ := src["tool_calls"].([]any)
	if v, ok := src["tool_calls"]; ok && v != nil && calls == nil {
		return nil, fmt.Errorf("%w: tool_calls is %s, not an array", provider.ErrMalformed, provider.TypeName(v))
	}
	_, hasText := src[s.text]
	// partial is a line carrying one member; the text member is "" on
	// lines of other members (as Ollama sends them) when the body has it.
	partial := func(member string, v any) json.Marshaler {
		var m []any
		if s.message != "" {
			if r, ok := src["role"]; ok {
				m = append(m, "role", r)
			}
		}
		switch {
		case member == s.text:
			m = append(m, s.text, v)
		case hasText:
			m = append(m, s.text, "", member, v)
		default:
			m = append(m, member, v)
		}
		kvs := []any{"model", body["model"], "created_at", body["created_at"]}
		if s.message != "" {
			kvs = append(kvs, s.message, provider.Ordered(m...))
		} else {
			kvs = append(kvs, m...)
		}
		return provider.Ordered(append(kvs, "done", false)...)
	}
	var out []json.Marshaler
	for _, p := range provider.Pieces(thinking, provider.TextPiece) {
		out = append(out, partial("thinking", p))
	}
	for _, p := range provider.Pieces(text, provider.TextPiece) {
		out = append(out, partial(s.text, p))
	}
	if len(calls) > 0 {
		out = append(out, partial("tool_calls", calls))
	}
	// The done line: the body as stored, its text emptied, thinking and
	// tool calls removed unless empty.
	last := provider.DeepCopy(body).(map[string]any)
	dst := last
	if s.message != "" {
		dst = last[s.message].(map[string]any)
	}
	if _, ok := dst[s.text]; ok {
		dst[s.text] = ""
	}
	if thinking != "" {
		delete(dst, "thinking")
	}
	if len(calls) > 0 {
		delete(dst, "tool_calls")
	}
	out = append(out, orderedLine(last, s.message))
	lines := make([][]byte, 0, len(out))
	for _, v := range out {
		b, err := provider.JSONLine(v)
		if err != nil {
			return nil, err
		}
		lines = append(lines, b)
	}
	return lines, nil
}

// orderedLine writes a body's members in Ollama's order (model, created_at,
// the message or response, done, done_reason, then the rest sorted).
func orderedLine(body map[string]any, message string) json.Marshaler {
	line := body
	if m, ok := body[message].(map[string]any); ok {
		line = maps.Clone(body)
		line[message] = provider.OrderedFirst(m, "role", "content", "thinking", "tool_calls")
	}
	return provider.OrderedFirst(line, "model", "created_at", "message", "response", "thinking", "done", "done_reason")
}
