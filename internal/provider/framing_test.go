package provider_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// framingOf is the framing of the format serving method path.
func framingOf(t testing.TB, path string) provider.Framing {
	t.Helper()
	f, _, ok := registry.Route("POST", path)
	if !ok {
		t.Fatalf("no format serves %s", path)
	}
	return provider.FramingOf(f)
}

// capture splits data into wire events, fed in pieces of size bytes (0 =
// at once).
func capture(fr provider.Framing, data []byte, size int) ([]snapshot.WireEvent, error) {
	var events []snapshot.WireEvent
	c := fr.NewCapture(func(ev snapshot.WireEvent) { events = append(events, ev) })
	for len(data) > 0 {
		n := len(data)
		if size > 0 && size < n {
			n = size
		}
		if _, err := c.Write(data[:n]); err != nil {
			return events, err
		}
		data = data[n:]
	}
	return events, c.Close()
}

// encode writes events back in the framing.
func encode(t testing.TB, fr provider.Framing, events []snapshot.WireEvent) []byte {
	t.Helper()
	var out []byte
	for i := range events {
		var err error
		if out, err = fr.AppendEvent(out, &events[i]); err != nil {
			t.Fatalf("AppendEvent(%+v): %v", events[i], err)
		}
	}
	return out
}

func TestFramingOfEachFormat(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/chat/completions": snapshot.FramingSSE,
		"/v1/messages":         snapshot.FramingSSE,
		"/v1/responses":        snapshot.FramingSSE,
		"/v1beta/models/gemini-2.5-flash:streamGenerateContent": snapshot.FramingSSE,
		"/api/chat": snapshot.FramingNDJSON,
		"/model/anthropic.claude-3-haiku/converse-stream":             snapshot.FramingAWSEventStream,
		"/model/anthropic.claude-3-haiku/invoke-with-response-stream": snapshot.FramingAWSEventStream,
	} {
		if got := framingOf(t, path).Name(); got != want {
			t.Errorf("%s: framing %q, want %q", path, got, want)
		}
	}
}

// TestSSECaptureKeepsEventsVerbatim: event names, ids and data (multi-line,
// with the spacing the provider used inside it) are kept; comments are not;
// the stream cut anywhere, or with CRLF line ends, gives the same events;
// writing them back and capturing again gives them again.
func TestSSECaptureKeepsEventsVerbatim(t *testing.T) {
	stream := ": keep-alive comment\n" +
		"event: message_start\nid: 7\ndata: {\"type\": \"ping\"}\n\n" +
		"data: line one\ndata:line two\ndata: \n\n" +
		"data:  two leading spaces\n\n" +
		"data: [DONE]\n\n"
	want := []snapshot.WireEvent{
		{Event: "message_start", ID: "7", Data: `{"type": "ping"}`},
		{Data: "line one\nline two\n"},
		{Data: " two leading spaces"},
		{Data: "[DONE]"},
	}
	fr := framingOf(t, "/v1/messages")
	for _, in := range []string{stream, string(bytes.ReplaceAll([]byte(stream), []byte("\n"), []byte("\r\n")))} {
		for _, size := range []int{0, 1, 5} {
			got, err := capture(fr, []byte(in), size)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("split %d: got %+v (%v), want %+v", size, got, err, want)
			}
		}
	}
	again, err := capture(fr, encode(t, fr, want), 3)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("written back and captured again: %+v (%v)", again, err)
	}
}

func TestNDJSONCaptureKeepsLines(t *testing.T) {
	fr := framingOf(t, "/api/chat")
	got, err := capture(fr, []byte("{\"a\": 1}\n\n{\"done\":true}"), 4)
	want := []snapshot.WireEvent{{Data: `{"a": 1}`}, {Data: `{"done":true}`}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v), want %+v", got, err, want)
	}
	if b := encode(t, fr, want); string(b) != "{\"a\": 1}\n{\"done\":true}\n" {
		t.Fatalf("written back as %q", b)
	}
}

// TestCaptureOfRecordedStreams: every recorded fixture stream captures,
// and written back it captures to the same events (what replay serves is
// what was recorded).
func TestCaptureOfRecordedStreams(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if len(files) == 0 {
		t.Fatal("no fixture streams")
	}
	fr := framingOf(t, "/v1/chat/completions")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		events, err := capture(fr, data, 0)
		if err != nil || len(events) == 0 {
			t.Fatalf("%s: %d events, %v", name, len(events), err)
		}
		again, err := capture(fr, encode(t, fr, events), 7)
		if err != nil || !reflect.DeepEqual(again, events) {
			t.Fatalf("%s: written back, the events change", name)
		}
	}
}

// FuzzWireCapture: the SSE and NDJSON captures never panic, do not depend
// on how the stream is cut, and what they capture, written back, captures
// to the same events.
func FuzzWireCapture(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint16(5), false)
	}
	f.Add([]byte("{\"a\":1}\n{\"b\":\xff}\n"), uint16(2), true)
	f.Add([]byte("event: x\r\ndata: a\rdata: b\n\n"), uint16(1), false)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, ndjson bool) {
		path := "/v1/chat/completions"
		if ndjson {
			path = "/api/chat"
		}
		fr := framingOf(t, path)
		whole, errWhole := capture(fr, data, 0)
		parts, errParts := capture(fr, data, int(cut%32)+1)
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("the cut changes the error: %v vs %v", errWhole, errParts)
		}
		if errWhole != nil {
			return
		}
		if !reflect.DeepEqual(whole, parts) {
			t.Fatalf("the cut changes the events:\n%+v\n%+v", whole, parts)
		}
		again, err := capture(fr, encode(t, fr, whole), 3)
		if err != nil {
			t.Fatalf("captured events written back do not capture: %v", err)
		}
		if len(again) != len(whole) && !(len(again) == 0 && len(whole) == 0) {
			t.Fatalf("written back, %d events become %d", len(whole), len(again))
		}
		for i := range whole {
			if !reflect.DeepEqual(again[i], whole[i]) {
				t.Fatalf("event %d changes when written back: %+v → %+v", i, whole[i], again[i])
			}
		}
	})
}

// TestCaptureKeepsLineEnds: a stream whose lines end in "\r\n" (Gemini's)
// is captured with that line end, and written back with it is the stream
// byte for byte; "\n" is the default and not reported.
func TestCaptureKeepsLineEnds(t *testing.T) {
	for _, c := range []struct{ path, stream, nl string }{
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "data: {\"a\":1}\r\n\r\ndata: {\"b\":2}\r\n\r\n", "\r\n"},
		{"/v1/chat/completions", "data: {\"a\":1}\n\ndata: [DONE]\n\n", ""},
		{"/api/chat", "{\"a\":1}\r\n{\"done\":true}\r\n", "\r\n"},
	} {
		fr := framingOf(t, c.path)
		var events []snapshot.WireEvent
		capt := fr.NewCapture(func(ev snapshot.WireEvent) { events = append(events, ev) })
		if _, err := capt.Write([]byte(c.stream)); err != nil || capt.Close() != nil {
			t.Fatal(err)
		}
		if capt.Newline() != c.nl {
			t.Errorf("%s: newline %q, want %q", c.path, capt.Newline(), c.nl)
		}
		if got := encode(t, fr.WithNewline(capt.Newline()), events); string(got) != c.stream {
			t.Errorf("%s: written back as %q, want %q", c.path, got, c.stream)
		}
	}
}
