package verify

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestReplayMemoSameReplies: requests answered from the memo (repeats) get
// the same status, headers and bytes as the first answer and as a server
// without a memo, plain and streamed, and count as hits.
func TestReplayMemoSameReplies(t *testing.T) {
	items := []snapshottest.Item{snapshottest.OpenAIChat("memo a"), snapshottest.AnthropicMessage("memo b")}
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	_, set := loadServed(t, dir, nil)
	with := NewReplayServer(ReplayOptions{Set: set, Display: ".ai-snapshots"})
	_, set = loadServed(t, dir, nil)
	without := NewReplayServer(ReplayOptions{Set: set, Display: ".ai-snapshots", MemoGeneration: -1})
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
