package replay

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// withWire gives it a stream as sent: its synthesized stream (with the
// usage chunk) captured into events at the offsets ms, cycling; no body.
func withWire(t *testing.T, it snapshottest.Item, ms ...int64) (snapshottest.Item, []byte) {
	t.Helper()
	it = withBody(it)
	f := registry.ForRecord(it.Provider, it.Request)
	var stream bytes.Buffer
	if err := f.SynthesizeStream(it.Response.Body, true, &stream, nil); err != nil {
		t.Fatal(err)
	}
	fr := provider.FramingOf(f)
	ws := &snapshot.WireStream{Framing: fr.Name()}
	c := fr.NewCapture(func(ev snapshot.WireEvent) {
		ev.MS = ms[len(ws.Events)%len(ms)]
		ws.Events = append(ws.Events, ev)
	})
	if _, err := c.Write(stream.Bytes()); err != nil {
		t.Fatal(err)
	}
	it.Response.Body, it.Response.Events, it.Response.Stream = nil, ws, true
	return it, stream.Bytes()
}

// TestRespondWire: a stream stored as its events is served event for event
// (not marked synthesized); with Latency each event waits for its recorded
// offset; the usage chunk the proxy asked for reaches only a request that
// asks for it; a non-streamed request gets the body the events assemble to.
func TestRespondWire(t *testing.T) {
	anth, anthStream := withWire(t, snapshottest.AnthropicMessage("as sent"), 5, 20, 20, 50)
	oai, oaiStream := withWire(t, snapshottest.OpenAIChat("as sent"), 1)
	set := loadSet(t, anth, oai)
	ix, e := NewIndex(set), NewEntries("")
	respond := func(it snapshottest.Item, path string, extra map[string]any, o Options) (*httptest.ResponseRecorder, Result) {
		t.Helper()
		h := http.Header{}
		if it.Provider == "anthropic" {
			h.Set("anthropic-version", "2023-06-01")
		}
		req, err := registry.Parse("POST", path, h, reqBody(t, it, extra))
		if err != nil {
			t.Fatal(err)
		}
		s := ix.Lookup(req.Key)
		if s == nil {
			t.Fatal("miss")
		}
		rec := httptest.NewRecorder()
		res, err := e.Respond(context.Background(), rec, req, s, o)
		if err != nil {
			t.Fatal(err)
		}
		return rec, res
	}

	var slept []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	rec, res := respond(anth, "/v1/messages", map[string]any{"stream": true}, Options{Latency: true, Sleep: sleep})
	if !bytes.Equal(rec.Body.Bytes(), anthStream) || res.Synthesized || rec.Header().Get(provider.HeaderSynthesized) != "" {
		t.Fatalf("served (synthesized %v)\n%s\nnot the stored events\n%s", res.Synthesized, rec.Body.Bytes(), anthStream)
	}
	var want []time.Duration
	last := int64(0)
	for _, ev := range anth.Response.Events.Events {
		if ev.MS > last {
			want = append(want, time.Duration(ev.MS-last)*time.Millisecond)
			last = ev.MS
		}
	}
	if len(want) < 3 || !reflect.DeepEqual(slept, want) {
		t.Fatalf("slept %v, want %v (each event at its recorded offset)", slept, want)
	}
	// Served again (kept), without latency: the same bytes, no sleep.
	slept = nil
	if again, _ := respond(anth, "/v1/messages", map[string]any{"stream": true}, Options{Sleep: sleep}); !bytes.Equal(again.Body.Bytes(), anthStream) || slept != nil {
		t.Fatalf("second reply differs or slept %v", slept)
	}

	withUsage, _ := respond(oai, "/v1/chat/completions", map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}, Options{})
	if !bytes.Equal(withUsage.Body.Bytes(), oaiStream) {
		t.Fatalf("with include_usage: not the stored events\n%s", withUsage.Body.Bytes())
	}
	without, _ := respond(oai, "/v1/chat/completions", map[string]any{"stream": true}, Options{})
	if strings.Contains(without.Body.String(), `"usage"`) || !strings.Contains(without.Body.String(), "as sent") || !strings.HasSuffix(without.Body.String(), "data: [DONE]\n\n") {
		t.Fatalf("without include_usage:\n%s", without.Body.String())
	}

	plain, res := respond(anth, "/v1/messages", nil, Options{})
	body, err := provider.Decode(bytes.TrimSpace(plain.Body.Bytes()))
	if err != nil || res.Synthesized {
		t.Fatalf("plain reply: %v (synthesized %v)", err, res.Synthesized)
	}
	if f, err := registry.ForRecord("anthropic", anth.Request).Fields(body); err != nil || f.Content != anth.Response.Content {
		t.Fatalf("plain reply fields %+v (%v)", f, err)
	}
}
