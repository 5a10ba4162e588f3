package provider

import (
	"bytes"
	"fmt"
)

// maxEventBytes caps one SSE line or event (the snapshot file cap): a stream
// that exceeds it is malformed rather than an unbounded allocation.
const maxEventBytes = 64 << 20

// lineScanner splits a byte stream into lines over arbitrary chunk
// boundaries. Lines end in "\n", "\r\n" or a lone "\r" (the SSE grammar).
type lineScanner struct {
	buf       []byte
	skipLF    bool // the last chunk ended in "\r": a leading "\n" belongs to it
	unlimited bool // no maxEventBytes cap (the usage stripper only forwards)
}

// feed calls line for every complete line (without its terminator, which
// is passed as eol) and strayLF for a "\n" that completes a "\r\n" split
// across two chunks. line must not retain its argument.
func (s *lineScanner) feed(p []byte, line func(text []byte, eol string) error, strayLF func() error) error {
	for len(p) > 0 {
		if s.skipLF {
			s.skipLF = false
			if p[0] == '\n' {
				p = p[1:]
				if strayLF != nil {
					if err := strayLF(); err != nil {
						return err
					}
				}
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			if !s.unlimited && len(s.buf)+len(p) > maxEventBytes {
				return fmt.Errorf("%w: SSE line longer than %d bytes", ErrMalformed, maxEventBytes)
			}
			s.buf = append(s.buf, p...)
			return nil
		}
		s.buf = append(s.buf, p[:i]...)
		eol := "\n"
		if p[i] == '\r' {
			switch {
			case i+1 >= len(p):
				eol = "\r"
				s.skipLF = true
			case p[i+1] == '\n':
				eol = "\r\n"
			default:
				eol = "\r"
			}
		}
		p = p[i+len(eol):]
		text := s.buf
		s.buf = s.buf[:0]
		if err := line(text, eol); err != nil {
			return err
		}
	}
	return nil
}

// sseField splits one non-blank SSE line into field name and value (one
// leading space of the value removed). Comment lines give name ":".
func sseField(line []byte) (name string, value []byte) {
	if len(line) > 0 && line[0] == ':' {
		return ":", nil
	}
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return string(line), nil
	}
	value = line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return string(line[:i]), value
}

var bom = []byte("\xEF\xBB\xBF")

// SSEEvent is one dispatched server-sent event.
type SSEEvent struct {
	Name string // the "event:" field, "" when absent
	ID   string // the event's own "id:" field, "" when absent
	Data []byte // data lines joined with "\n"
	Num  int    // 1-based number of the event in the stream
}

// SSEParser turns a byte stream into events, as the SSE specification (and
// the SDKs) do: fields accumulate until a blank line dispatches them; an event
// with no data line is not dispatched; comments and unknown fields are
// ignored; a trailing event without its blank line is never dispatched.
type SSEParser struct {
	lines   lineScanner
	started bool
	event   string
	id      string
	data    []byte
	hasData bool
	count   int
	eol     string // the first line's end ("\n", "\r\n" or "\r")
}

// LineEnd is how the stream's first line ended ("" before any line): the
// line end a capture of the stream writes it back with.
func (p *SSEParser) LineEnd() string { return p.eol }

// Feed parses b (any chunk of the stream) and calls dispatch for every
// complete event; an error from dispatch stops parsing and is returned.
// The event's Data is only valid during the call.
func (p *SSEParser) Feed(b []byte, dispatch func(SSEEvent) error) error {
	return p.lines.feed(b, func(line []byte, eol string) error {
		if p.eol == "" {
			p.eol = eol
		}
		if !p.started {
			p.started = true
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			if !p.hasData {
				p.event, p.id = "", ""
				return nil
			}
			p.count++
			ev := SSEEvent{Name: p.event, ID: p.id, Data: p.data, Num: p.count}
			p.event, p.id, p.hasData = "", "", false
			err := dispatch(ev)
			p.data = p.data[:0]
			return err
		}
		name, value := sseField(line)
		switch name {
		case "event":
			p.event = string(value)
		case "id":
			p.id = string(value)
		case "data":
			if p.hasData {
				p.data = append(p.data, '\n')
			}
			if len(p.data)+len(value) > maxEventBytes {
				return fmt.Errorf("%w: SSE event larger than %d bytes", ErrMalformed, maxEventBytes)
			}
			p.data = append(p.data, value...)
			p.hasData = true
		}
		return nil
	}, nil)
}

// Events is the number of events dispatched so far.
func (p *SSEParser) Events() int { return p.count }
