package snapshot

import (
	"encoding/base64"
	"fmt"
	"sort"
)

// The framings a stream's wire capture may have (format 1.2.0
// response.wire.framing, DESIGN §13.4).
const (
	FramingSSE            = "sse"             // text/event-stream
	FramingNDJSON         = "ndjson"          // application/x-ndjson (Ollama)
	FramingAWSEventStream = "aws-eventstream" // application/vnd.amazon.eventstream (Bedrock)
)

// WireStream is a stream as the provider sent it (format 1.2.0
// response.wire as an object, DESIGN §13.4): its events in order, each with
// its offset from the request. Replay serves it event for event; the record's
// body and derived fields are what assembling it gave.
type WireStream struct {
	Framing string
	// Newline is how the stream's lines ended when not "\n" ("\r\n", as
	// Gemini sends them, or "\r"); replay writes them the same way.
	Newline string
	Events  []WireEvent
}

// WireEvent is one event of a WireStream.
type WireEvent struct {
	// MS is the offset, in milliseconds from the request's arrival, at
	// which the event was complete.
	MS int64
	// Event and ID are an SSE event's "event:" and "id:" fields ("" when
	// absent).
	Event string
	ID    string
	// Data is the event's payload verbatim: an SSE event's data lines
	// joined with "\n", an NDJSON line, an event-stream frame's payload.
	// A payload that is not UTF-8 is kept in Binary instead (stored as
	// "data_b64").
	Data   string
	Binary []byte
	// Headers are an event-stream frame's string headers. A frame with a
	// header of another type is kept whole in Frame (stored as
	// "frame_b64"), and Headers and Data are then empty.
	Headers map[string]string
	Frame   []byte
}

// value is the stored JSON object of w.
func (w *WireStream) value() map[string]any {
	events := make([]any, len(w.Events))
	for i := range w.Events {
		ev := &w.Events[i]
		m := map[string]any{"ms": ev.MS}
		if ev.Event != "" {
			m["event"] = ev.Event
		}
		if ev.ID != "" {
			m["id"] = ev.ID
		}
		switch {
		case ev.Frame != nil:
			m["frame_b64"] = base64.StdEncoding.EncodeToString(ev.Frame)
		case ev.Binary != nil:
			m["data_b64"] = base64.StdEncoding.EncodeToString(ev.Binary)
		default:
			m["data"] = ev.Data
		}
		if len(ev.Headers) > 0 {
			h := make(map[string]any, len(ev.Headers))
			for k, v := range ev.Headers {
				h[k] = v
			}
			m["headers"] = h
		}
		events[i] = m
	}
	m := map[string]any{"framing": w.Framing, "events": events}
	if w.Newline != "" {
		m["newline"] = w.Newline
	}
	return m
}

// WireStreamFromValue reads a stored response.wire object. The record has
// passed schema validation, so shapes are known; an undecodable base64
// member is an error naming the event.
func WireStreamFromValue(v map[string]any) (*WireStream, error) {
	w := &WireStream{}
	w.Framing, _ = v["framing"].(string)
	w.Newline, _ = v["newline"].(string)
	events, _ := v["events"].([]any)
	w.Events = make([]WireEvent, len(events))
	for i, e := range events {
		m, _ := e.(map[string]any)
		ev := &w.Events[i]
		ev.MS, _ = Int64(m["ms"])
		ev.Event, _ = m["event"].(string)
		ev.ID, _ = m["id"].(string)
		ev.Data, _ = m["data"].(string)
		for _, b := range []struct {
			name string
			to   *[]byte
		}{{"data_b64", &ev.Binary}, {"frame_b64", &ev.Frame}} {
			s, ok := m[b.name].(string)
			if !ok {
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("response.wire.events[%d].%s: %w", i, b.name, err)
			}
			*b.to = raw
		}
		if h, ok := m["headers"].(map[string]any); ok {
			ev.Headers = make(map[string]string, len(h))
			for k, hv := range h {
				ev.Headers[k], _ = hv.(string)
			}
		}
	}
	return w, nil
}

// HeaderNames are an event's header names, sorted (the order replay writes
// them in).
func (ev *WireEvent) HeaderNames() []string {
	names := make([]string, 0, len(ev.Headers))
	for k := range ev.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
