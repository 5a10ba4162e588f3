package bedrock

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// WireFraming is AWS's event stream (provider.Framer): each frame is kept
// as its string headers and its payload (response.wire, DESIGN §13.4), and
// replay encodes it again with eventstream.Encoder (valid CRCs). A frame
// with a header of another type is kept whole.
func (wire) WireFraming() provider.Framing { return eventStreamFraming{} }

// WireFraming is InvokeAnthropic's framing, the same event stream.
func (InvokeAnthropic) WireFraming() provider.Framing { return eventStreamFraming{} }

type eventStreamFraming struct{}

func (eventStreamFraming) Name() string { return snapshot.FramingAWSEventStream }

// WithNewline: frames have no lines.
func (f eventStreamFraming) WithNewline(string) provider.Framing { return f }

func (eventStreamFraming) NewCapture(emit func(snapshot.WireEvent)) provider.WireCapture {
	return &frameCapture{emit: emit}
}

type frameCapture struct {
	r    FrameReader
	emit func(snapshot.WireEvent)
}

func (c *frameCapture) Write(p []byte) (int, error) {
	return len(p), c.r.FeedMessages(p, func(raw []byte, msg eventstream.Message) error {
		c.emit(wireEvent(raw, msg))
		return nil
	})
}

func (c *frameCapture) Close() error { return nil }

func (c *frameCapture) Newline() string { return "" }

// wireEvent is one decoded frame as a wire event.
func wireEvent(raw []byte, msg eventstream.Message) snapshot.WireEvent {
	h := make(map[string]string, len(msg.Headers))
	for _, hd := range msg.Headers {
		s, ok := hd.Value.(eventstream.StringValue)
		if _, dup := h[hd.Name]; !ok || dup {
			return snapshot.WireEvent{Frame: bytes.Clone(raw)}
		}
		h[hd.Name] = string(s)
	}
	ev := snapshot.WireEvent{Headers: h}
	if utf8.Valid(msg.Payload) {
		ev.Data = string(msg.Payload)
	} else {
		ev.Binary = bytes.Clone(msg.Payload)
	}
	return ev
}

func (eventStreamFraming) AppendEvent(dst []byte, ev *snapshot.WireEvent) ([]byte, error) {
	if ev.Frame != nil {
		return append(dst, ev.Frame...), nil
	}
	var h eventstream.Headers
	for _, name := range ev.HeaderNames() {
		h.Set(name, eventstream.StringValue(ev.Headers[name]))
	}
	payload := ev.Binary
	if payload == nil {
		payload = []byte(ev.Data)
	}
	b := bytes.NewBuffer(dst)
	if err := eventstream.NewEncoder().Encode(b, eventstream.Message{Headers: h, Payload: payload}); err != nil {
		return dst, fmt.Errorf("%w: event-stream frame: %v", provider.ErrMalformed, err)
	}
	return b.Bytes(), nil
}
