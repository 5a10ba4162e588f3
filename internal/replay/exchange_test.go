package replay_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// exchangeSnapshot builds and checks the record of the n-th occurrence of
// an exchange (as record writes it) answered status with resp.
func exchangeSnapshot(t *testing.T, p provider.Name, method, path string, body []byte, n int, resp map[string]any) *check.Snapshot {
	t.Helper()
	u, _ := url.Parse(path)
	f, e, ok := registry.RouteExchange(httptest.NewRequest(method, path, nil))
	if !ok {
		t.Fatalf("%s %s is no exchange", method, path)
	}
	req, err := registry.ParseExchange(f, e, u, body)
	if err != nil {
		t.Fatal(err)
	}
	key := registry.OccurrenceKey(req.Key, n)
	rec := map[string]any{"id": snapshot.IDOf(key), "timestamp": "2026-03-01T12:00:00Z",
		"source":   map[string]any{"file": "app.py", "line": int64(3), "function": "main"},
		"endpoint": string(e), "request": req.Body, "response": resp}
	if n > 0 {
		rec["occurrence"] = int64(n)
	}
	if err := snapshot.Rehash(rec); err != nil {
		t.Fatal(err)
	}
	doc, _ := snapshot.FileDocument(rec)
	data, err := snapshot.MarshalFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s, fs := check.CheckBytes(snapshot.RelPath(string(p), rec["id"].(string)), data, check.Options{Config: &check.Config{}})
	if s == nil || fs.Errors() > 0 {
		t.Fatalf("the exchange does not check: %v", fs)
	}
	return s
}

// Occurrences are served in order, the last repeating; gaps repeat the
// occurrence before them; a bytes answer keeps its status, Content-Type and
// bytes.
func TestExchangeOccurrencesAndBytes(t *testing.T) {
	poll := func(status string) map[string]any {
		return map[string]any{"status": int64(200), "latency_ms": int64(1), "body": map[string]any{"id": "resp_1", "status": status}}
	}
	blob := []byte{0x00, 0x01, 0xfe, 0xff}
	set := &check.SetResult{Snapshots: []*check.Snapshot{
		exchangeSnapshot(t, provider.OpenAI, "GET", "/v1/responses/resp_1", nil, 0, poll("queued")),
		exchangeSnapshot(t, provider.OpenAI, "GET", "/v1/responses/resp_1", nil, 1, poll("in_progress")),
		exchangeSnapshot(t, provider.OpenAI, "GET", "/v1/responses/resp_1", nil, 3, poll("completed")),
		exchangeSnapshot(t, provider.OpenAI, "GET", "/v1/files/file_1/content", nil, 0, map[string]any{"status": int64(200), "latency_ms": int64(2),
			"body_b64": base64.StdEncoding.EncodeToString(blob), "content_type": "application/octet-stream"}),
		exchangeSnapshot(t, provider.OpenAI, "DELETE", "/v1/files/file_9", nil, 0, map[string]any{"status": int64(404), "latency_ms": int64(2),
			"body": map[string]any{"error": map[string]any{"message": "No such File object: file_9"}}}),
	}}
	ix := replay.NewIndex(set)
	entries := replay.NewEntries("")
	ask := func(method, path string) *httptest.ResponseRecorder {
		t.Helper()
		u, _ := url.Parse(path)
		r := httptest.NewRequest(method, path, nil)
		f, e, ok := registry.RouteExchange(r)
		if !ok {
			t.Fatalf("%s %s: no exchange", method, path)
		}
		req, _ := registry.ParseExchange(f, e, u, nil)
		s := ix.LookupRequest(req)
		if s == nil {
			t.Fatalf("%s %s: miss", method, path)
		}
		w := httptest.NewRecorder()
		if _, err := entries.Respond(context.Background(), w, req, s, replay.Options{Latency: true, Sleep: func(context.Context, time.Duration) error { return nil }}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	for i, want := range []string{"queued", "in_progress", "in_progress", "completed", "completed"} {
		w := ask("GET", "/v1/responses/resp_1")
		if got := w.Body.String(); got != `{"id":"resp_1","status":"`+want+`"}` || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("poll %d: %s %q, want %s", i+1, w.Header().Get("Content-Type"), got, want)
		}
	}
	w := ask("GET", "/v1/files/file_1/content")
	if w.Code != 200 || w.Body.String() != string(blob) || w.Header().Get("Content-Type") != "application/octet-stream" {
		t.Errorf("bytes: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.Bytes())
	}
	if w := ask("DELETE", "/v1/files/file_9"); w.Code != 404 || w.Header().Get(provider.HeaderSnapshotID) == "" {
		t.Errorf("404: %d %v", w.Code, w.Header())
	}
	if !ix.Occurs(set.Snapshots[0].Key) || ix.Occurs(set.Snapshots[3].Key) {
		t.Error("Occurs: only the polled request has occurrences")
	}
	if u := ix.Unused(); len(u) != 0 {
		t.Errorf("unused: %v", u)
	}
}
