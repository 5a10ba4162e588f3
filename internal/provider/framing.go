package provider

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Framing is how a format's streams are cut into events on the wire: the
// recording proxy captures a stream through it into response.wire, and
// replay writes those events back (format 1.2.0, DESIGN §13.4). SSE and
// NDJSON are here; a format with another framing (Bedrock's AWS event
// stream) implements Framer.
type Framing interface {
	// Name is the stored response.wire.framing (snapshot.FramingSSE, …).
	Name() string
	// NewCapture returns a fresh capture of one stream: Write takes the
	// stream's bytes in arbitrary pieces and hands every complete event
	// to emit; Close hands over what a framing completes at the end (an
	// NDJSON line without its newline). A malformed stream makes Write or
	// Close fail; the answer's assembler reports the same stream.
	NewCapture(emit func(snapshot.WireEvent)) WireCapture
	// AppendEvent appends ev in the framing's bytes to dst.
	AppendEvent(dst []byte, ev *snapshot.WireEvent) ([]byte, error)
	// WithNewline is the framing writing lines ended by nl ("\r\n" as
	// Gemini sends them; "" = "\n"), for a stream captured with
	// WireCapture.Newline nl (snapshot.WireStream.Newline).
	WithNewline(nl string) Framing
}

// WireCapture splits one stream into its wire events (Framing.NewCapture).
type WireCapture interface {
	Write(p []byte) (int, error)
	Close() error
	// Newline is how the stream's lines end when not "\n" ("\r\n",
	// "\r"); "" for "\n" and for framings without lines.
	Newline() string
}

// newline is nl, or "\n" for "".
func newline(nl string) string {
	if nl == "" {
		return "\n"
	}
	return nl
}

// lineEnd is a parser's first line end as WireCapture.Newline reports it.
func lineEnd(eol string) string {
	if eol == "\n" {
		return ""
	}
	return eol
}

// Framer is the optional capability of a format whose streams are framed
// neither as SSE nor as NDJSON.
type Framer interface {
	WireFraming() Framing
}

// FramingOf is f's stream framing: its own (Framer), NDJSON for a format
// streaming application/x-ndjson, SSE otherwise.
func FramingOf(f Format) Framing {
	if fr, ok := f.(Framer); ok {
		return fr.WireFraming()
	}
	if strings.HasPrefix(f.StreamContentType(), NDJSONContentType) {
		return ndjsonFraming{}
	}
	return sseFraming{}
}

// sseFraming is text/event-stream: an event's "event:" and "id:" fields and
// its data (lines joined with "\n") are kept; comments and "retry:" are not
// (no SDK hands them to the application). nl is the line end it writes.
type sseFraming struct{ nl string }

func (f sseFraming) WithNewline(nl string) Framing { return sseFraming{nl} }

func (sseFraming) Name() string { return snapshot.FramingSSE }

func (sseFraming) NewCapture(emit func(snapshot.WireEvent)) WireCapture {
	return &sseCapture{emit: emit}
}

type sseCapture struct {
	p    SSEParser
	emit func(snapshot.WireEvent)
}

func (c *sseCapture) Write(b []byte) (int, error) {
	err := c.p.Feed(b, func(ev SSEEvent) error {
		c.emit(dataEvent(snapshot.WireEvent{Event: ev.Name, ID: ev.ID}, ev.Data))
		return nil
	})
	return len(b), err
}

func (c *sseCapture) Close() error { return nil }

func (c *sseCapture) Newline() string { return lineEnd(c.p.LineEnd()) }

func (f sseFraming) AppendEvent(dst []byte, ev *snapshot.WireEvent) ([]byte, error) {
	nl := newline(f.nl)
	if ev.Event != "" {
		dst = append(append(append(dst, "event: "...), ev.Event...), nl...)
	}
	if ev.ID != "" {
		dst = append(append(append(dst, "id: "...), ev.ID...), nl...)
	}
	data := ev.Data
	if ev.Binary != nil {
		data = string(ev.Binary)
	}
	for {
		line, rest, more := strings.Cut(data, "\n")
		dst = append(append(append(dst, "data: "...), line...), nl...)
		if !more {
			break
		}
		data = rest
	}
	return append(dst, nl...), nil
}

// ndjsonFraming is application/x-ndjson: one event per non-blank line,
// ended by nl.
type ndjsonFraming struct{ nl string }

func (f ndjsonFraming) WithNewline(nl string) Framing { return ndjsonFraming{nl} }

func (ndjsonFraming) Name() string { return snapshot.FramingNDJSON }

func (ndjsonFraming) NewCapture(emit func(snapshot.WireEvent)) WireCapture {
	return &ndjsonCapture{emit: emit}
}

type ndjsonCapture struct {
	p    NDJSONParser
	emit func(snapshot.WireEvent)
}

func (c *ndjsonCapture) line(data []byte, _ int) error {
	c.emit(dataEvent(snapshot.WireEvent{}, data))
	return nil
}

func (c *ndjsonCapture) Write(b []byte) (int, error) { return len(b), c.p.Feed(b, c.line) }

func (c *ndjsonCapture) Close() error { return c.p.Flush(c.line) }

func (c *ndjsonCapture) Newline() string { return lineEnd(c.p.LineEnd()) }

func (f ndjsonFraming) AppendEvent(dst []byte, ev *snapshot.WireEvent) ([]byte, error) {
	if ev.Binary != nil {
		dst = append(dst, ev.Binary...)
	} else {
		dst = append(dst, ev.Data...)
	}
	return append(dst, newline(f.nl)...), nil
}

// dataEvent is ev with data as its payload: Data when it is UTF-8, Binary
// otherwise (a copy either way: data is only valid during the parser's
// call).
func dataEvent(ev snapshot.WireEvent, data []byte) snapshot.WireEvent {
	if utf8.Valid(data) {
		ev.Data = string(data)
	} else {
		ev.Binary = append([]byte{}, data...)
	}
	return ev
}

// AssembleWire is the answer a stored stream holds: its events written back
// in f's framing and fed to f's assembler (a streamed record of format
// 1.2.0 stores no response.body; DESIGN §13.4, docs/format.md).
func AssembleWire(f Format, ws *snapshot.WireStream) (map[string]any, error) {
	fr := FramingOf(f).WithNewline(ws.Newline)
	if ws.Framing != fr.Name() {
		return nil, fmt.Errorf("%w: response.wire.framing is %q, but %s streams are %q", ErrMalformed, ws.Framing, f.Endpoint(), fr.Name())
	}
	a := f.NewAssembler()
	var buf []byte
	for i := range ws.Events {
		var err error
		if buf, err = fr.AppendEvent(buf[:0], &ws.Events[i]); err != nil {
			return nil, fmt.Errorf("response.wire.events[%d]: %w", i, err)
		}
		if _, err := a.Write(buf); err != nil {
			return nil, fmt.Errorf("response.wire.events[%d]: %w", i, err)
		}
	}
	return a.Done()
}
