package provider

import (
	"bytes"
	"encoding/json"
	"io"
)

// NewUsageStripper returns a writer that rewrites an OpenAI chat or
// completions SSE stream for a client that did not ask for
// stream_options.include_usage while the proxy did (DESIGN §6): it removes
// only what that option causes (DESIGN §13.3) — the usage-only chunk (an
// empty "choices" array with a non-null usage) is dropped and a null
// "usage" member is removed from every chunk (as is a non-null one on a
// chunk without "choices"); a non-null usage on a chunk that carries
// choices is the provider's own, sent unasked, and is kept, as is any usage
// nested in another member (Groq's x_groq.usage). Every other byte passes
// through unchanged; a rewritten event keeps its other lines and its line
// endings, and its JSON loses only the usage member (a multi-line data field
// becomes one line). Each event is written, and flush called, as soon as its
// terminating blank line arrives — nothing is held back beyond the event in
// progress. Close writes a trailing incomplete event as it is, without
// closing w. Write errors come only from w.
func NewUsageStripper(w io.Writer, flush func()) io.WriteCloser {
	if flush == nil {
		flush = func() {}
	}
	return &usageStripper{w: w, flush: flush, lines: lineScanner{unlimited: true}}
}

type usageStripper struct {
	w           io.Writer
	flush       func()
	lines       lineScanner
	started     bool
	raw         []byte     // raw bytes of the event in progress
	spans       []lineSpan // its lines
	lastDropped bool
	err         error
}

type lineSpan struct {
	start, end, eolEnd int // raw[start:end] is the text, raw[end:eolEnd] the line ending
}

func (s *usageStripper) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if err := s.lines.feed(p, s.line, s.strayLF); err != nil {
		return len(p), err
	}
	return len(p), nil
}

// strayLF is the "\n" of a "\r\n" split across writes. Inside an event it
// joins that event's bytes; after an event's blank line it belongs to the
// event already handled and follows its fate.
func (s *usageStripper) strayLF() error {
	if len(s.spans) > 0 {
		s.raw = append(s.raw, '\n')
		s.spans[len(s.spans)-1].eolEnd++
		return nil
	}
	if s.lastDropped {
		return nil
	}
	return s.emit([]byte("\n"))
}

func (s *usageStripper) emit(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	s.flush()
	return nil
}

func (s *usageStripper) line(text []byte, eol string) error {
	start := len(s.raw)
	s.raw = append(s.raw, text...)
	end := len(s.raw)
	s.raw = append(s.raw, eol...)
	s.spans = append(s.spans, lineSpan{start, end, len(s.raw)})
	if len(text) > 0 {
		return nil
	}
	out, drop := s.rewrite()
	s.lastDropped = drop
	var err error
	if !drop {
		err = s.emit(out)
	}
	s.raw = s.raw[:0]
	s.spans = s.spans[:0]
	return err
}

// rewrite decides the fate of the complete event in s.raw.
func (s *usageStripper) rewrite() (out []byte, drop bool) {
	var data [][]byte
	var dataLines []int
	for i, sp := range s.spans {
		text := s.raw[sp.start:sp.end]
		if !s.started {
			s.started = true
			text = bytes.TrimPrefix(text, bom)
		}
		name, value := sseField(text)
		if name == "data" {
			data = append(data, value)
			dataLines = append(dataLines, i)
		}
	}
	if len(data) == 0 {
		return s.raw, false
	}
	joined := bytes.Join(data, []byte("\n"))
	var chunk map[string]json.RawMessage
	if err := json.Unmarshal(joined, &chunk); err != nil {
		return s.raw, false
	}
	usage, has := chunk["usage"]
	if !has {
		return s.raw, false
	}
	if choices, ok := chunk["choices"]; ok && !isNullJSON(usage) {
		var arr []json.RawMessage
		if json.Unmarshal(choices, &arr) == nil && len(arr) == 0 {
			return nil, true
		}
		// Usage on a chunk that carries choices is not what include_usage
		// adds (an extra chunk with empty choices, null usage elsewhere):
		// the provider sends it anyway (Groq, TGI and the servers behind
		// the Hugging Face router put it on the last chunk), and the
		// application gets it (DESIGN §13.3).
		return s.raw, false
	}
	stripped := removeMember(joined, "usage")
	if len(dataLines) == 1 {
		sp := s.spans[dataLines[0]]
		text := s.raw[sp.start:sp.end]
		prefixLen := len(text) - len(data[0])
		var b bytes.Buffer
		b.Write(s.raw[:sp.start+prefixLen])
		b.Write(stripped)
		b.Write(s.raw[sp.end:])
		return b.Bytes(), false
	}
	var b bytes.Buffer
	for i, sp := range s.spans {
		switch {
		case i == dataLines[0]:
			b.WriteString("data: ")
			b.Write(compact(stripped))
			b.Write(s.raw[sp.end:sp.eolEnd])
		case contains(dataLines, i):
		default:
			b.Write(s.raw[sp.start:sp.eolEnd])
		}
	}
	return b.Bytes(), false
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return bytes.ReplaceAll(b, []byte("\n"), []byte(" "))
	}
	return out.Bytes()
}

func contains(s []int, v int) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

func isNullJSON(b json.RawMessage) bool {
	return string(bytes.TrimSpace(b)) == "null"
}

func (s *usageStripper) Close() error {
	if s.err != nil {
		return s.err
	}
	if len(s.raw) > 0 || len(s.lines.buf) > 0 {
		rest := append(s.raw, s.lines.buf...)
		s.raw, s.lines.buf = nil, nil
		return s.emit(rest)
	}
	return nil
}

// removeMember removes every member named key from the top-level JSON object
// in data, keeping all other bytes. data must be valid JSON.
func removeMember(data []byte, key string) []byte {
	for {
		start, end, ok := findMember(data, key)
		if !ok {
			return data
		}
		out := make([]byte, 0, len(data)-(end-start))
		out = append(out, data[:start]...)
		data = append(out, data[end:]...)
	}
}

// findMember returns the byte range to cut to remove one member named key,
// including one adjacent comma.
func findMember(data []byte, key string) (start, end int, ok bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, 0, false
	}
	i++
	prevComma := -1
	for {
		i = skipWS(data, i)
		if i >= len(data) || data[i] == '}' {
			return 0, 0, false
		}
		keyStart := i
		keyEnd := skipString(data, i)
		var k string
		if json.Unmarshal(data[keyStart:keyEnd], &k) != nil {
			return 0, 0, false
		}
		i = skipWS(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return 0, 0, false
		}
		i = skipValue(data, skipWS(data, i+1))
		valueEnd := i
		i = skipWS(data, i)
		if i >= len(data) {
			return 0, 0, false
		}
		hasComma := data[i] == ','
		if k == key {
			switch {
			case hasComma:
				return keyStart, skipWS(data, i+1), true
			case prevComma >= 0:
				return prevComma, valueEnd, true
			default:
				return keyStart, valueEnd, true
			}
		}
		if !hasComma {
			return 0, 0, false
		}
		prevComma = i
		i++
	}
}

func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at data[i].
func skipString(data []byte, i int) int {
	i++
	for i < len(data) {
		switch data[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(data)
}

// skipValue returns the index after the JSON value starting at data[i].
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(data) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(data[i])) {
		i++
	}
	return i
}
