package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

func loadSet(t *testing.T, items ...snapshottest.Item) *check.SetResult {
	t.Helper()
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !set.Valid() {
		t.Fatalf("set invalid: %v", set.Findings)
	}
	return set
}

func withBody(it snapshottest.Item) snapshottest.Item {
	model, _ := it.Request["model"].(string)
	body := registry.ForRecord(it.Provider, it.Request).SynthesizeBody("fixture00001", it.Time, model, it.Response.Fields)
	b, _ := json.Marshal(body)
	m, _ := provider.Decode(b)
	it.Response.Body = m
	return it
}

func reqBody(t *testing.T, it snapshottest.Item, extra map[string]any) []byte {
	t.Helper()
	m := map[string]any{}
	for k, v := range it.Request {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseKeyMatchesSnapshot(t *testing.T) {
	oa, an := snapshottest.OpenAIChat("hello"), snapshottest.AnthropicMessage("hi")
	set := loadSet(t, oa, an)
	ix := NewIndex(set)
	if ix.Len() != 2 {
		t.Fatalf("Len = %d", ix.Len())
	}
	h := http.Header{}
	r, err := registry.Parse("POST", "/prefix/v1/chat/completions", h, reqBody(t, oa, map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Stream || !r.IncludeUsage || r.Provider != provider.OpenAI || r.Endpoint != provider.ChatCompletions {
		t.Fatalf("parsed %+v", r)
	}
	if ix.Lookup(r.Key) == nil {
		t.Fatalf("openai request key %s not found", r.Key)
	}
	// Anthropic: the stored header joins the key.
	h.Set("anthropic-version", "2023-06-01")
	r, err = registry.Parse("POST", "/v1/messages", h, reqBody(t, an, nil))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Lookup(r.Key) == nil {
		t.Fatalf("anthropic request not found")
	}
	r, err = registry.Parse("POST", "/v1/messages", http.Header{}, reqBody(t, an, nil))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Lookup(r.Key) != nil {
		t.Fatalf("request without anthropic-version must not match")
	}
	if len(ix.Unused()) != 0 {
		t.Fatalf("unused = %v", ix.Unused())
	}
	if _, err := registry.Parse("GET", "/v1/models", h, nil); !errors.Is(err, provider.ErrNotLLMCall) {
		t.Fatalf("GET /v1/models: %v", err)
	}
	if _, err := registry.Parse("POST", "/v1/chat/completions", h, []byte(`{"a":1,"a":2}`)); !errors.Is(err, provider.ErrBadRequest) {
		t.Fatalf("duplicate keys: %v", err)
	}
	if _, err := registry.Parse("POST", "/v1/chat/completions", h, []byte(`[1]`)); !errors.Is(err, provider.ErrBadRequest) {
		t.Fatalf("array: %v", err)
	}
}

func TestRespond(t *testing.T) {
	items := []snapshottest.Item{
		withBody(snapshottest.OpenAIChat("stored body")),
		snapshottest.OpenAIChat("synthesized body"),
		withBody(snapshottest.AnthropicMessage("stored body")),
		snapshottest.AnthropicMessage("synthesized body"),
	}
	set := loadSet(t, items...)
	ix, e := NewIndex(set), NewEntries("")
	for _, it := range items {
		for _, stream := range []bool{false, true} {
			name := it.Provider + "/" + it.Response.Content
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				path, h := "/v1/chat/completions", http.Header{}
				if it.Provider == "anthropic" {
					path = "/v1/messages"
					h.Set("anthropic-version", "2023-06-01")
				}
				extra := map[string]any{}
				if stream {
					extra["stream"] = true
					if it.Provider == "openai" {
						extra["stream_options"] = map[string]any{"include_usage": true}
					}
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
				var slept time.Duration
				res, err := e.Respond(context.Background(), rec, req, s, Options{Latency: true, Sleep: func(_ context.Context, d time.Duration) error { slept = d; return nil }})
				if err != nil {
					t.Fatal(err)
				}
				if slept != time.Duration(it.Response.LatencyMS)*time.Millisecond {
					t.Errorf("slept %v", slept)
				}
				if got := rec.Header().Get(provider.HeaderSnapshotID); got != s.Record.ID {
					t.Errorf("snapshot id header %q", got)
				}
				if res.Synthesized != (it.Response.Body == nil) || (rec.Header().Get(provider.HeaderSynthesized) == "true") != res.Synthesized {
					t.Errorf("synthesized = %v", res.Synthesized)
				}
				var body map[string]any
				if stream {
					if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
						t.Fatalf("content type %q", ct)
					}
					a := req.Format.NewAssembler()
					if _, err := a.Write(rec.Body.Bytes()); err != nil {
						t.Fatal(err)
					}
					if body, err = a.Done(); err != nil {
						t.Fatal(err)
					}
				} else {
					if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
						t.Fatalf("content type %q", ct)
					}
					if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(rec.Body.Len()) {
						t.Errorf("Content-Length %q, body %d bytes", cl, rec.Body.Len())
					}
					if body, err = provider.Decode(bytes.TrimSpace(rec.Body.Bytes())); err != nil {
						t.Fatal(err)
					}
				}
				got, err := req.Format.Fields(body)
				if err != nil {
					t.Fatal(err)
				}
				if d := provider.Diff(s.Record.Response.Fields, got); len(d) > 0 {
					t.Fatalf("replayed answer differs: %v", d)
				}
			})
		}
	}
}

func TestLookupRequestHeaderlessSnapshots(t *testing.T) {
	migrated := snapshottest.AnthropicMessage("legacy question")
	migrated.Headers = nil // 0.9.0 never stored request headers
	recorded := snapshottest.AnthropicMessage("recorded question")
	ix := NewIndex(loadSet(t, migrated, recorded))
	h := http.Header{}
	h.Set("anthropic-version", "2026-10-21")
	parse := func(it snapshottest.Item) *provider.Request {
		r, err := registry.Parse("POST", "/v1/messages", h, reqBody(t, it, nil))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if s := ix.LookupRequest(parse(migrated)); s == nil {
		t.Fatal("a snapshot without request_headers must match whatever anthropic-version the SDK sends")
	}
	// A snapshot that stored its headers keeps them in the key.
	if s := ix.LookupRequest(parse(recorded)); s != nil {
		t.Fatal("recorded with anthropic-version 2023-06-01, requested with 2026-10-21: must miss")
	}
	h.Set("anthropic-version", "2023-06-01")
	if s := ix.LookupRequest(parse(recorded)); s == nil {
		t.Fatal("same headers must hit")
	}
}

// TestRespondHeadersPerReply: the header values Respond keeps per snapshot
// fit every reply whatever comes first (stream, then plain, then stream
// again), and a wrapper adding to a reply's headers does not leak into the
// next reply.
func TestRespondHeadersPerReply(t *testing.T) {
	it := withBody(snapshottest.OpenAIChat("stored body"))
	ix, e := NewIndex(loadSet(t, it)), NewEntries("")
	for i, stream := range []bool{true, false, true, false} {
		extra := map[string]any{}
		if stream {
			extra["stream"] = true
		}
		req, err := registry.Parse("POST", "/v1/chat/completions", http.Header{}, reqBody(t, it, extra))
		if err != nil {
			t.Fatal(err)
		}
		s := ix.Lookup(req.Key)
		rec := httptest.NewRecorder()
		if _, err := e.Respond(context.Background(), rec, req, s, Options{}); err != nil {
			t.Fatal(err)
		}
		h := rec.Header()
		if got := h.Values(provider.HeaderSnapshotID); len(got) != 1 || got[0] != s.Record.ID {
			t.Errorf("reply %d: snapshot id %q, want [%s]", i, got, s.Record.ID)
		}
		wantType, wantLen, wantCache := "application/json", strconv.Itoa(rec.Body.Len()), ""
		if stream {
			wantType, wantLen, wantCache = provider.SSEContentType, "", "no-cache"
		}
		if got := h.Values("Content-Type"); len(got) != 1 || got[0] != wantType {
			t.Errorf("reply %d: Content-Type %q, want %s", i, got, wantType)
		}
		if h.Get("Content-Length") != wantLen || h.Get("Cache-Control") != wantCache {
			t.Errorf("reply %d: Content-Length %q Cache-Control %q, want %q %q", i, h.Get("Content-Length"), h.Get("Cache-Control"), wantLen, wantCache)
		}
		h.Add(provider.HeaderSnapshotID, "added")
		h.Add("Content-Type", "added")
		h.Add("Content-Length", "1")
		h.Add("Cache-Control", "added")
	}
}

// TestIndexHits: Lookup counts hits per snapshot, Get does not; Unused
// lists the snapshots never looked up; unknown keys count nothing.
func TestIndexHits(t *testing.T) {
	ix := NewIndex(loadSet(t, snapshottest.OpenAIChat("hits a"), snapshottest.OpenAIChat("hits b")))
	all := ix.Snapshots()
	if len(all) != 2 {
		t.Fatalf("%d snapshots", len(all))
	}
	a, b := all[0], all[1]
	if ix.Get(a.Key) != a || ix.Get(b.Key) != b || ix.Get("nope") != nil || ix.Lookup("nope") != nil {
		t.Fatal("Get/Lookup by key")
	}
	for range 2 {
		if ix.Lookup(a.Key) != a {
			t.Fatal("Lookup")
		}
	}
	if ix.Hits(a.Key) != 2 || ix.Hits(b.Key) != 0 || ix.Hits("nope") != 0 {
		t.Errorf("hits %d %d", ix.Hits(a.Key), ix.Hits(b.Key))
	}
	if u := ix.Unused(); len(u) != 1 || u[0] != b {
		t.Errorf("unused %v", u)
	}
}
