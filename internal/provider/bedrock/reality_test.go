package bedrock

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// TestConverseStreamNewerDeltas (DESIGN §13.3): a ConverseStream answer
// with citation deltas beside its text, a server tool's toolResult deltas,
// an image delta, a delta kind and an event type traceforge does not know
// assembles — nothing refused, nothing a delta carried dropped — and its
// text reaches content.
func TestConverseStreamNewerDeltas(t *testing.T) {
	var b bytes.Buffer
	ev := func(typ string, v any) {
		f, err := EncodeEvent(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(f)
	}
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	citation := obj("title", "Opening hours", "sourceContent", []any{obj("text", "Open 10:00-18:00")}, "location", obj("documentChar", obj("documentIndex", 0, "start", 0, "end", 16)))
	ev("messageStart", obj("role", "assistant", "p", "abc"))
	ev("contentBlockDelta", obj("contentBlockIndex", 0, "delta", obj("text", "It opens at 10:00"), "p", "ab"))
	ev("contentBlockDelta", obj("contentBlockIndex", 0, "delta", obj("citation", citation)))
	ev("contentBlockDelta", obj("contentBlockIndex", 0, "delta", obj("text", ".")))
	ev("contentBlockStop", obj("contentBlockIndex", 0))
	ev("contentBlockStart", obj("contentBlockIndex", 1, "start", obj("toolResult", obj("toolUseId", "tooluse_web", "type", "web_search", "status", "success"))))
	ev("contentBlockDelta", obj("contentBlockIndex", 1, "delta", obj("toolResult", []any{obj("json", obj("results", []any{"gulbenkian.pt"}))})))
	ev("contentBlockDelta", obj("contentBlockIndex", 1, "delta", obj("toolResult", []any{obj("text", "two results")})))
	ev("contentBlockStop", obj("contentBlockIndex", 1))
	ev("contentBlockDelta", obj("contentBlockIndex", 2, "delta", obj("image", obj("source", obj("bytes", "iVBORw0KGgo=")))))
	ev("contentBlockDelta", obj("contentBlockIndex", 3, "delta", obj("hologram", obj("frame", 1))))
	ev("contentBlockDelta", obj("contentBlockIndex", 3, "delta", obj("hologram", obj("frame", 2))))
	ev("futureEvent", obj("note", "kept in the events"))
	ev("messageStop", obj("stopReason", "end_turn"))
	ev("metadata", obj("usage", obj("inputTokens", 10, "outputTokens", 8, "totalTokens", 18), "metrics", obj("latencyMs", 120)))

	a := NewConverse().NewAssembler()
	if _, err := a.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	body, err := a.Done()
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	got := canonicalText(t, body["output"].(map[string]any)["message"].(map[string]any)["content"])
	want := canonicalText(t, []any{
		obj("citationsContent", obj("content", []any{obj("text", "It opens at 10:00.")}, "citations", []any{citation})),
		obj("toolResult", obj("toolUseId", "tooluse_web", "type", "web_search", "status", "success", "content", []any{obj("json", obj("results", []any{"gulbenkian.pt"})), obj("text", "two results")})),
		obj("image", obj("source", obj("bytes", "iVBORw0KGgo="))),
		obj("hologram", []any{obj("frame", 1), obj("frame", 2)}),
	})
	if got != want {
		t.Fatalf("assembled content\n%s\nwant\n%s", got, want)
	}
	f, err := NewConverse().Fields(body)
	if err != nil || f.Content != "It opens at 10:00." || f.FinishReason != "end_turn" || f.TokensUsed != 18 {
		t.Fatalf("fields %+v (%v)", f, err)
	}
	// The stream as sent keeps every frame, the unknown event included.
	events, err := captureFrames(b.Bytes(), 1<<20)
	if err != nil || len(events) != 15 || events[12].Headers[":event-type"] != "futureEvent" {
		t.Fatalf("captured %d events (%v)", len(events), err)
	}
	if !reflect.DeepEqual(encodeFrames(t, events), b.Bytes()) {
		// Headers are written in name order; Bedrock's own order differs,
		// so compare decoded frames instead.
		again, err := captureFrames(encodeFrames(t, events), 7)
		if err != nil || !reflect.DeepEqual(again, events) {
			t.Fatalf("written back, the frames change: %v", err)
		}
	}
}

func canonicalText(t *testing.T, v any) string {
	t.Helper()
	b, err := provider.Marshal(provider.DeepCopy(v))
	if err != nil {
		t.Fatal(err)
	}
	d, err := provider.DecodeValue(b)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := provider.Marshal(d)
	return string(out)
}
