package bedrock

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// captureFrames splits data into wire events, fed in pieces of size bytes.
func captureFrames(data []byte, size int) ([]snapshot.WireEvent, error) {
	var events []snapshot.WireEvent
	c := eventStreamFraming{}.NewCapture(func(ev snapshot.WireEvent) { events = append(events, ev) })
	for len(data) > 0 {
		n := min(size, len(data))
		if _, err := c.Write(data[:n]); err != nil {
			return events, err
		}
		data = data[n:]
	}
	return events, c.Close()
}

func encodeFrames(t testing.TB, events []snapshot.WireEvent) []byte {
	t.Helper()
	var out []byte
	for i := range events {
		var err error
		if out, err = (eventStreamFraming{}).AppendEvent(out, &events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestEventStreamCaptureRoundTrip: a ConverseStream answer is captured as
// one event per frame (its string headers and JSON payload), and written
// back it decodes — CRCs valid — to the same frames; a frame with a header
// of another type is kept whole, byte for byte.
func TestEventStreamCaptureRoundTrip(t *testing.T) {
	if (Converse{}).WireFraming().Name() != snapshot.FramingAWSEventStream || provider.FramingOf(NewConverse()).Name() != snapshot.FramingAWSEventStream {
		t.Fatal("Converse does not stream as an AWS event stream")
	}
	body, err := provider.Decode([]byte(toolAnswer))
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := NewConverse().SynthesizeStream(body, false, &stream, nil); err != nil {
		t.Fatal(err)
	}
	var h eventstream.Headers
	h.Set(":message-type", eventstream.StringValue("event"))
	h.Set("x-count", eventstream.Int32Value(3))
	if err := eventstream.NewEncoder().Encode(&stream, eventstream.Message{Headers: h, Payload: []byte("\xff\x00")}); err != nil {
		t.Fatal(err)
	}
	events, err := captureFrames(stream.Bytes(), 9)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 4 {
		t.Fatalf("%d events", len(events))
	}
	first := events[0]
	if first.Headers[":event-type"] != "messageStart" || first.Headers[":message-type"] != "event" || !bytes.Contains([]byte(first.Data), []byte(`"role":"assistant"`)) {
		t.Fatalf("first event %+v", first)
	}
	last := events[len(events)-1]
	if last.Frame == nil || last.Headers != nil || last.Data != "" {
		t.Fatalf("a frame with an int32 header is not kept whole: %+v", last)
	}
	again, err := captureFrames(encodeFrames(t, events), 1<<20)
	if err != nil || !reflect.DeepEqual(again, events) {
		t.Fatalf("written back and captured again: %v\n%+v\n%+v", err, again, events)
	}
	asm := NewConverse().NewAssembler()
	if _, err := asm.Write(encodeFrames(t, events[:len(events)-1])); err != nil {
		t.Fatal(err)
	}
	if got, err := asm.Done(); err != nil || !reflect.DeepEqual(got["stopReason"], body["stopReason"]) {
		t.Fatalf("the written-back stream assembles to %v (%v)", got, err)
	}
}

// FuzzEventStreamCapture: the capture never panics, does not depend on how
// the bytes are cut, and what it captures, written back, captures the same.
func FuzzEventStreamCapture(f *testing.F) {
	body, err := provider.Decode([]byte(toolAnswer))
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := NewConverse().SynthesizeStream(body, false, &b, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes(), uint16(7))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0}, uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole, errWhole := captureFrames(data, len(data)+1)
		parts, errParts := captureFrames(data, int(cut%64)+1)
		if (errWhole == nil) != (errParts == nil) || !reflect.DeepEqual(whole, parts) {
			t.Fatalf("the cut changes the capture: %v vs %v", errWhole, errParts)
		}
		if errWhole != nil {
			return
		}
		again, err := captureFrames(encodeFrames(t, whole), 5)
		if err != nil || len(again) != len(whole) {
			t.Fatalf("written back: %v, %d events become %d", err, len(whole), len(again))
		}
		for i := range whole {
			if !reflect.DeepEqual(again[i], whole[i]) {
				t.Fatalf("event %d changes when written back", i)
			}
		}
	})
}
