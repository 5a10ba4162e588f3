package provider

import (
	"bytes"
	"fmt"
)

// NDJSONContentType is the Content-Type of newline-delimited JSON streams
// (Ollama).
const NDJSONContentType = "application/x-ndjson"

// NDJSONParser splits a newline-delimited JSON stream into its lines over
// arbitrary chunk boundaries. Blank lines are skipped; a line longer than the
// snapshot file cap is malformed.
type NDJSONParser struct {
	lines lineScanner
	count int
	eol   string // the first line's end
}

// LineEnd is how the stream's first line ended ("" before any line).
func (p *NDJSONParser) LineEnd() string { return p.eol }

// Feed parses b (any chunk of the stream) and calls line for every complete
// non-blank line with its 1-based number; an error from line stops parsing
// and is returned. data is only valid during the call.
func (p *NDJSONParser) Feed(b []byte, line func(data []byte, num int) error) error {
	return p.lines.feed(b, func(text []byte, eol string) error {
		if p.eol == "" {
			p.eol = eol
		}
		if len(bytes.TrimSpace(text)) == 0 {
			return nil
		}
		p.count++
		return line(text, p.count)
	}, nil)
}

// Flush hands a last line that ended without its newline to line (JSON is
// self-delimiting, so such a line is complete when the stream ended).
func (p *NDJSONParser) Flush(line func(data []byte, num int) error) error {
	rest := p.lines.buf
	p.lines.buf = nil
	if len(bytes.TrimSpace(rest)) == 0 {
		return nil
	}
	p.count++
	return line(rest, p.count)
}

// Lines is the number of lines dispatched so far.
func (p *NDJSONParser) Lines() int { return p.count }

// JSONLine is v encoded as one NDJSON line (no HTML escaping, "\n" ended).
func JSONLine(v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return append(b, '\n'), nil
}
