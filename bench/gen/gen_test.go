package gen

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestKindRequests: every kind's calls are deterministic, distinct per
// index, and parse as the application's call would: plain and streamed
// variants of one item share the request key (they replay the same
// snapshot) and differ in Stream; the key is the generated snapshot's.
func TestKindRequests(t *testing.T) {
	wantPath := map[Kind]string{Chat: "/v1/chat/completions", Responses: "/v1/responses", Gemini: "/v1beta/models/gemini-2.5-flash:generateContent",
		Wire: "/v1/messages", Bedrock: "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"}
	for _, k := range Kinds {
		for _, i := range []int{0, 7} {
			plain, stream := k.HTTPRequest(i, false), k.HTTPRequest(i, true)
			if again := k.HTTPRequest(i, true); !bytes.Equal(again.Body, stream.Body) || again.Path != stream.Path {
				t.Errorf("%s item %d: two calls differ", k, i)
			}
			if other := k.HTTPRequest(i+2, false); bytes.Equal(other.Body, plain.Body) {
				t.Errorf("%s items %d and %d: same body", k, i, i+2)
			}
			p, err := registry.Parse(http.MethodPost, plain.URLPath(), plain.Header, plain.Body)
			if err != nil {
				t.Fatalf("%s item %d plain: %v", k, i, err)
			}
			s, err := registry.Parse(http.MethodPost, stream.URLPath(), stream.Header, stream.Body)
			if err != nil {
				t.Fatalf("%s item %d stream: %v", k, i, err)
			}
			if p.Stream || !s.Stream || p.Key != s.Key {
				t.Errorf("%s item %d: plain stream=%v, stream stream=%v, keys equal=%v", k, i, p.Stream, s.Stream, p.Key == s.Key)
			}
			if i == 0 && plain.Path != wantPath[k] {
				t.Errorf("%s: path %s, want %s", k, plain.Path, wantPath[k])
			}
			if _, id, err := snapshottest.Build(k.Item(i)); err != nil || id != p.ID() {
				t.Errorf("%s item %d: snapshot id %s (%v), request id %s", k, i, id, err, p.ID())
			}
		}
	}
	if _, err := ParseKind("ollama"); err == nil || !strings.Contains(err.Error(), "chat, responses, gemini, wire, bedrock") {
		t.Errorf("ParseKind(ollama) = %v", err)
	}
}

// TestGeminiPartsConcatenate: the Gemini answer is cut into geminiParts
// text parts that make up the item's content.
func TestGeminiPartsConcatenate(t *testing.T) {
	it := Gemini.Item(3)
	parts := it.Response.Body["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.(map[string]any)["text"].(string))
	}
	if len(parts) != geminiParts || b.String() != Content(3) || it.Response.Content != Content(3) {
		t.Errorf("%d parts, joined %q, content %q, want %q", len(parts), b.String(), it.Response.Content, Content(3))
	}
}

// TestStoredAsSent: Wire and Bedrock items hold their answer as a 1.2.0
// recording of a stream does — the events in the format's framing, at
// increasing offsets, no body — and the events assemble to the item's
// content and usage.
func TestStoredAsSent(t *testing.T) {
	for _, k := range []Kind{Wire, Bedrock} {
		it := k.Item(5)
		ws := it.Response.Events
		f := FormatOf(it)
		if ws == nil || it.Response.Body != nil || !it.Response.Stream || ws.Framing != provider.FramingOf(f).Name() {
			t.Fatalf("%s: not stored as events: %+v", k, it.Response)
		}
		for j := 1; j < len(ws.Events); j++ {
			if ws.Events[j].MS <= ws.Events[j-1].MS {
				t.Errorf("%s: event %d at %d ms, after %d ms", k, j, ws.Events[j].MS, ws.Events[j-1].MS)
			}
		}
		body, err := provider.AssembleWire(f, ws)
		if err != nil {
			t.Fatal(err)
		}
		fields, err := f.Fields(body)
		if err != nil || fields.Content != Content(5) || fields.TokensUsed != it.Response.TokensUsed || len(ws.Events) < 10 {
			t.Errorf("%s: %d events assemble to %+v (%v), want content %q", k, len(ws.Events), fields, err, Content(5))
		}
	}
}
