package verify

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestReplayMemoSameReplies: requests answered from the memo (repeats) get
// the same status, headers and bytes as the first answer and as a server
// without a memo, plain and streamed, and count as hits.
func TestReplayMemoSameReplies(t *testing.T) {
	items := []snapshottest.Item{snapshottest.OpenAIChat("memo a"), snapshottest.AnthropicMessage("memo b")}
	dir := writeItems(t, items...)
	with := servedBy(t, dir, 0)
	without := servedBy(t, dir, -1)
	type reply struct {
		status            int
		id, ctype, length string
		body              []byte
	}
	do := func(rs *ReplayServer, path string, h http.Header, body []byte) reply {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header = h.Clone()
		w := httptest.NewRecorder()
		rs.ServeHTTP(w, r)
		return reply{w.Code, w.Header().Get(provider.HeaderSnapshotID), w.Header().Get("Content-Type"), w.Header().Get("Content-Length"), w.Body.Bytes()}
	}
	sent := 0
	for _, it := range items {
		path, h := "/v1/chat/completions", http.Header{}
		if it.Provider == "anthropic" {
			path = "/v1/messages"
			h.Set("anthropic-version", "2023-06-01")
		}
		for _, stream := range []bool{false, true} {
			body := map[string]any{}
			for k, v := range it.Request {
				body[k] = v
			}
			if stream {
				body["stream"] = true
			}
			raw := marshalJSON(t, body)
			want := do(without, path, h, raw)
			if want.status != http.StatusOK || want.id == "" || len(want.body) == 0 {
				t.Fatalf("%s stream=%v: %+v", it.Provider, stream, want)
			}
			for i := 0; i < 3; i++ {
				got := do(with, path, h, raw)
				sent++
				if got.status != want.status || got.id != want.id || got.ctype != want.ctype || got.length != want.length || !bytes.Equal(got.body, want.body) {
					t.Errorf("%s stream=%v, reply %d: %+v\nwant %+v", it.Provider, stream, i, got, want)
				}
			}
		}
	}
	if n := with.memo.Len(); n != 4 {
		t.Errorf("memo holds %d requests, want 4", n)
	}
	if rep := with.Finish(); rep.Served != sent || len(rep.Unused) != 0 || len(rep.Misses) != 0 {
		t.Errorf("report: %+v", rep)
	}
}

// TestReplayConcurrentHitsAndMisses: concurrent hits (memoized after the
// first, or all parsed without a memo: their decoded strings alias pooled
// body buffers) and misses — reusing pooled body buffers — each get their
// own answer; the report counts them all, and the miss's key and diff are
// those of a server that saw the miss alone (run with -race).
func TestReplayConcurrentHitsAndMisses(t *testing.T) {
	items := []snapshottest.Item{snapshottest.OpenAIChat("conc a"), snapshottest.OpenAIChat("conc b")}
	dir := writeItems(t, items...)
	bodies := [][]byte{marshalJSON(t, items[0].Request), marshalJSON(t, items[1].Request), marshalJSON(t, snapshottest.OpenAIChat("conc miss").Request)}
	alone := servedBy(t, dir, -1)
	alone.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(bodies[2])))
	wantMiss := alone.Finish().Misses[0]
	for _, gen := range []int{0, -1} {
		rs := servedBy(t, dir, gen)
		want := make([]string, len(bodies))
		for i, b := range bodies[:2] {
			w := httptest.NewRecorder()
			rs.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(b)))
			want[i] = w.Body.String()
		}
		const workers, each = 8, 30
		errs := make(chan string, workers*each)
		var wg sync.WaitGroup
		for g := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					k := (g + i) % len(bodies)
					w := httptest.NewRecorder()
					rs.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(bodies[k])))
					switch {
					case k == 2 && w.Code != http.StatusNotFound:
						errs <- fmt.Sprintf("memo %d: miss answered %d", gen, w.Code)
					case k < 2 && (w.Code != http.StatusOK || w.Body.String() != want[k]):
						errs <- fmt.Sprintf("memo %d: request %d answered %d %q", gen, k, w.Code, w.Body.String())
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		rep := rs.Finish()
		misses := 0
		for g := range workers {
			for i := range each {
				if (g+i)%len(bodies) == 2 {
					misses++
				}
			}
		}
		if rep.Served != 2+workers*each-misses || len(rep.Misses) != 1 || rep.Misses[0].Count != misses {
			t.Fatalf("memo %d: served %d, misses %+v; want %d served, one miss ×%d", gen, rep.Served, rep.Misses, 2+workers*each-misses, misses)
		}
		if m := rep.Misses[0]; m.Key != wantMiss.Key || m.Closest != wantMiss.Closest || !reflect.DeepEqual(m.Diff, wantMiss.Diff) || m.Key == "" {
			t.Errorf("memo %d: miss %+v\nwant %+v", gen, m, wantMiss)
		}
	}
}

// TestMemoGeneration: the default memo holds each snapshot's request once,
// never fewer than replay.MemoGeneration nor more than four times that.
func TestMemoGeneration(t *testing.T) {
	for n, want := range map[int]int{0: replay.MemoGeneration, 10: replay.MemoGeneration, 10000: 10000, 100000: 4 * replay.MemoGeneration} {
		if got := memoGeneration(n); got != want {
			t.Errorf("memoGeneration(%d) = %d, want %d", n, got, want)
		}
	}
	if g := NewReplayServer(ReplayOptions{}).memo.Generation(); g != replay.MemoGeneration {
		t.Errorf("empty set: generation %d", g)
	}
	if g := NewReplayServer(ReplayOptions{MemoGeneration: 7}).memo.Generation(); g != 7 {
		t.Errorf("explicit size: generation %d", g)
	}
	if m := NewReplayServer(ReplayOptions{MemoGeneration: -1}).memo; m != nil || m.Generation() != 0 {
		t.Error("MemoGeneration < 0 must turn the memo off")
	}
}

// writeItems writes a snapshot set of items and returns its folder.
func writeItems(t *testing.T, items ...snapshottest.Item) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// servedBy is a replay server over the set in dir with the given memo size.
func servedBy(t *testing.T, dir string, memoGeneration int) *ReplayServer {
	t.Helper()
	_, set, served := loadServed(t, dir, nil)
	return NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots", MemoGeneration: memoGeneration})
}
