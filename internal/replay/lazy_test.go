package replay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// bigAnswer is a chat snapshot (in memory, not on disk) whose answer is
// about size bytes of words.
func bigAnswer(size int) *check.Snapshot {
	word := "lorem ipsum dolor sit amet, "
	content := strings.Repeat(word, size/len(word)+1)[:size]
	req := map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "long"}},
		"temperature": provider.Num(0), "seed": provider.Num(1), "max_tokens": provider.Num(1 << 20)}
	body := map[string]any{
		"id": "chatcmpl-big", "object": "chat.completion", "created": provider.Num(1767954600), "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": provider.Num(0), "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": content, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": provider.Num(5), "completion_tokens": provider.Num(int64(size / 4)), "total_tokens": provider.Num(int64(size/4 + 5))},
	}
	return &check.Snapshot{Rel: "openai/big.json", Provider: "openai", Record: &snapshot.Record{
		Provider: "openai", ID: "big", Timestamp: "2026-01-09T10:30:00Z", Endpoint: "/v1/chat/completions", Request: req,
		Response: snapshot.Response{Body: body, Fields: snapshot.Fields{Content: content, FinishReason: "stop"}},
	}}
}

func bigRequest(tb testing.TB, s *check.Snapshot, stream bool) *provider.Request {
	tb.Helper()
	raw := fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"long"}],"temperature":0,"seed":1,"max_tokens":1048576,"stream":%v}`, stream)
	r, err := registry.Parse(http.MethodPost, "/v1/chat/completions", http.Header{}, []byte(raw))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

var errStop = errors.New("client gone")

// firstWrite is a ResponseWriter that notes how much the process had
// allocated when the first byte went out, then hangs up.
type firstWrite struct {
	h         http.Header
	status    int
	allocated uint64
	before    uint64
	wrote     bool
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

func (f *firstWrite) Header() http.Header { return f.h }
func (f *firstWrite) WriteHeader(s int)   { f.status = s }
func (f *firstWrite) Write(p []byte) (int, error) {
	if !f.wrote {
		f.wrote = true
		f.allocated = totalAlloc() - f.before
	}
	return 0, errStop
}

// TestStreamedReplayFirstByteBeforeStreamIsBuilt: the first event of a
// 16 MB streamed replay goes out before the rest of the stream exists. The
// whole stream is over 150 MB of SSE (a million 16-rune pieces, each in a
// full chunk); building it before the first write allocates at least that.
// Lazily, the first write comes after a few chunks' worth of work, far less
// than the answer itself. (The old code also cut the pieces in quadratic
// time: this test did not finish.)
func TestStreamedReplayFirstByteBeforeStreamIsBuilt(t *testing.T) {
	const size = 16 << 20
	s := bigAnswer(size)
	req := bigRequest(t, s, true)
	w := &firstWrite{h: http.Header{}}
	e := NewEntries("")
	runtime.GC()
	w.before = totalAlloc()
	_, err := e.Respond(context.Background(), w, req, s, Options{})
	if !errors.Is(err, errStop) {
		t.Fatalf("Respond = %v, want the writer's error", err)
	}
	if !w.wrote || w.status != http.StatusOK {
		t.Fatalf("wrote=%v status=%d", w.wrote, w.status)
	}
	if w.allocated >= size {
		t.Fatalf("%d bytes allocated before the first byte of a %d-byte answer: the stream is built before it is sent", w.allocated, size)
	}
	if enc := e.entry(s); enc.cachedStream(false) != nil {
		t.Fatal("a broken-off stream was kept")
	}
}

// countingWriter counts events and bytes.
type countingWriter struct {
	h      http.Header
	events int
	bytes  int64
	text   strings.Builder
	keep   bool
}

func (c *countingWriter) Header() http.Header { return c.h }
func (c *countingWriter) WriteHeader(int)     {}
func (c *countingWriter) Flush()              {}
func (c *countingWriter) Write(p []byte) (int, error) {
	c.events++
	c.bytes += int64(len(p))
	if c.keep {
		c.text.Write(p)
	}
	return len(p), nil
}

// TestSmallStreamsKeptLargeOnesNot: a small streamed answer is synthesized
// once and served from the cache afterwards (same bytes); a large one is
// never held.
func TestSmallStreamsKeptLargeOnesNot(t *testing.T) {
	small := bigAnswer(1000)
	e := NewEntries("")
	var first, second countingWriter
	first.h, second.h = http.Header{}, http.Header{}
	first.keep, second.keep = true, true
	if _, err := e.Respond(context.Background(), &first, bigRequest(t, small, true), small, Options{}); err != nil {
		t.Fatal(err)
	}
	kept := e.entry(small).cachedStream(false)
	if kept == nil || len(kept) != first.events {
		t.Fatalf("small stream not kept: %d events kept, %d sent", len(kept), first.events)
	}
	if _, err := e.Respond(context.Background(), &second, bigRequest(t, small, true), small, Options{}); err != nil {
		t.Fatal(err)
	}
	if first.text.String() != second.text.String() {
		t.Fatal("the kept stream differs from the synthesized one")
	}
	large := bigAnswer(keepLimit * 2)
	var out countingWriter
	out.h = http.Header{}
	if _, err := e.Respond(context.Background(), &out, bigRequest(t, large, true), large, Options{}); err != nil {
		t.Fatal(err)
	}
	if out.bytes <= keepLimit || e.entry(large).cachedStream(false) != nil {
		t.Fatalf("large stream (%d bytes) kept", out.bytes)
	}
}

// BenchmarkReplayLarge: replaying a 1 MB and a 16 MB answer, plain and
// streamed (DESIGN §12.10.1: a streamed replay takes about as long as a
// plain one, linear in the answer's size).
func BenchmarkReplayLarge(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		s := bigAnswer(size)
		e := NewEntries("")
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%dMB/plain", size>>20)
			if stream {
				name = fmt.Sprintf("%dMB/stream", size>>20)
			}
			req := bigRequest(b, s, stream)
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					w := &countingWriter{h: http.Header{}}
					if _, err := e.Respond(context.Background(), w, req, s, Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
