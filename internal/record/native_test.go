package record_test

import (
	"github.com/traceforge/traceforge/internal/provider"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
)

// geminiKey is a Gemini-shaped key: it must reach the upstream and never
// the snapshot folder or the log.
var geminiKey = "AIzaSy" + strings.Repeat("G", 33)

func geminiBody(prompt string) map[string]any {
	return map[string]any{
		"contents":         []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": prompt}}}},
		"generationConfig": map[string]any{"temperature": 0, "seed": 7, "maxOutputTokens": 64},
	}
}

func ollamaChat(prompt string) map[string]any {
	return map[string]any{
		"model":    "llama3.2",
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
		"options":  map[string]any{"temperature": 0, "seed": 7, "num_predict": 64},
	}
}

// folderText is every file of the snapshot folder, concatenated.
func folderText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func snapshotFiles(t *testing.T, dir, provider string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, provider, "*.json"))
	return files
}

// TestRecordGemini: :streamGenerateContent?alt=sse is passed through as SSE
// and keyed with :generateContent; the model comes from the path; the key
// (query parameter or header) is forwarded and never stored or logged.
func TestRecordGemini(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.Gemini] = fake.URL })
	r := p.do("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key="+geminiKey, geminiBody("Say hi"), nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(r.body), "data: ") {
		t.Fatalf("stream: %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if last := fake.LastRequest(); last.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || !strings.Contains(last.RawQuery, "key="+geminiKey) {
		t.Errorf("upstream got %s ?%s; want the path and the key as sent", last.Path, last.RawQuery)
	}
	id := r.header.Get("X-Traceforge-Snapshot-Id")
	r2 := p.do("/v1beta/models/gemini-2.5-flash:generateContent", geminiBody("Say hi"), map[string]string{"x-goog-api-key": geminiKey})
	if r2.status != 200 || r2.header.Get("X-Traceforge-Snapshot-Id") != id || id == "" {
		t.Fatalf("plain call: %d, id %q vs streamed %q", r2.status, r2.header.Get("X-Traceforge-Snapshot-Id"), id)
	}
	s := p.finish()
	if s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	files := snapshotFiles(t, dir, "gemini")
	if len(files) != 1 || filepath.Base(files[0]) != id+".json" {
		t.Fatalf("gemini files %v, want one %s.json", files, id)
	}
	text := folderText(t, dir)
	for _, want := range []string{`"endpoint": "/v1beta/models/gemini-2.5-flash:generateContent"`, `"model": "gemini-2.5-flash"`, `"finish_reason": "STOP"`} {
		if !strings.Contains(text, want) {
			t.Errorf("snapshot lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, geminiKey) || strings.Contains(p.log.String(), geminiKey) {
		t.Error("the Gemini key reached the snapshot folder or the log")
	}
}

// TestRecordOllama: NDJSON streams (Ollama's default) pass through line by
// line; "stream": false answers one JSON; both are one snapshot.
func TestRecordOllama(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.Ollama] = fake.URL })
	r := p.do("/api/chat", ollamaChat("Say hi"), nil)
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/x-ndjson") || len(lines) < 2 || !strings.Contains(lines[len(lines)-1], `"done":true`) {
		t.Fatalf("stream: %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
	body := ollamaChat("Say hi")
	body["stream"] = false
	r2 := p.do("/api/chat", body, nil)
	if r2.status != 200 || strings.Count(strings.TrimSpace(string(r2.body)), "\n") != 0 || r2.header.Get("X-Traceforge-Snapshot-Id") != r.header.Get("X-Traceforge-Snapshot-Id") {
		t.Fatalf("plain: %d\n%s", r2.status, r2.body)
	}
	gen := p.do("/api/generate", map[string]any{"model": "llama3.2", "prompt": "Why is the sky blue?", "options": map[string]any{"temperature": 0, "seed": 7, "num_predict": 64}}, nil)
	if gen.status != 200 {
		t.Fatalf("generate: %d %s", gen.status, gen.body)
	}
	s := p.finish()
	if s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	if files := snapshotFiles(t, dir, "ollama"); len(files) != 2 {
		t.Fatalf("ollama files %v, want chat and generate", files)
	}
	if text := folderText(t, dir); !strings.Contains(text, `"endpoint": "/api/chat"`) || !strings.Contains(text, `"endpoint": "/api/generate"`) {
		t.Errorf("endpoints not stored:\n%s", text)
	}
}

// TestRecordMessagesWithoutV1: a client whose base URL ends in /v1 posts
// to /messages; it is keyed and forwarded as /v1/messages.
func TestRecordMessagesWithoutV1(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	a := p.do("/messages", anthropicMsg("Say hi"), nil)
	if a.status != 200 || fake.LastRequest().Path != "/v1/messages" {
		t.Fatalf("status %d, upstream path %q", a.status, fake.LastRequest().Path)
	}
	b := p.do("/v1/messages", anthropicMsg("Say hi"), nil)
	if b.header.Get("X-Traceforge-Snapshot-Id") != a.header.Get("X-Traceforge-Snapshot-Id") {
		t.Error("/messages and /v1/messages must be one snapshot")
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	if text := folderText(t, dir); !strings.Contains(text, `"endpoint": "/v1/messages"`) {
		t.Errorf("endpoint:\n%s", text)
	}
}

// TestGeminiKeyNotInUnreachableError: a transport error quotes the URL,
// query included; the Gemini key (?key=…) reaches neither the application's
// error body nor the summary.
func TestGeminiKeyNotInUnreachableError(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dead := fake.URL
	fake.Close() // nothing listens there any more
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	const secret = "plainSecretValue123"
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.Gemini] = dead })
	r := p.do("/v1beta/models/gemini-2.5-flash:generateContent?key="+secret, geminiBody("Say hi"), nil)
	if r.status != 502 || !strings.Contains(string(r.body), `"status":"UNAVAILABLE"`) {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	s := p.finish()
	if text := summaryText(s) + string(r.body) + p.log.String(); strings.Contains(text, secret) || !strings.Contains(text, "could not be reached") {
		t.Fatalf("key leaked or no reason given:\n%s", text)
	}
}

// TestRecordGeminiStreamWithoutSSE: :streamGenerateContent without
// ?alt=sse answers a JSON array; it reaches the application unchanged and
// is listed, not snapshotted, with the fix.
func TestRecordGeminiStreamWithoutSSE(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.Gemini] = fake.URL })
	r := p.do("/v1beta/models/gemini-2.5-flash:streamGenerateContent", geminiBody("Say hi"), map[string]string{"x-goog-api-key": geminiKey})
	if r.status != 200 || !strings.HasPrefix(strings.TrimSpace(string(r.body)), "[") {
		t.Fatalf("the application must get the JSON array: %d %s", r.status, r.body)
	}
	s := p.finish()
	if text := summaryText(s); !s.Failed() || !hasKind(s, record.KindBadResponse) || !strings.Contains(text, "alt=sse") {
		t.Fatalf("want a listed problem naming alt=sse:\n%s", text)
	}
	if files := snapshotFiles(t, dir, "gemini"); len(files) != 0 {
		t.Fatalf("snapshotted: %v", files)
	}
}

// TestGeminiModelContradictingPathRefused (issue 30 item 4, DESIGN §12.2):
// a Gemini body naming another model than its path is answered 400 in
// Gemini's error shape, named by its source; nothing is forwarded and
// nothing is stored.
func TestGeminiModelContradictingPathRefused(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.Gemini] = fake.URL })
	body := geminiBody("Say hi")
	body["model"] = "models/gemini-2.5-pro"
	r := p.do("/v1beta/models/gemini-2.5-flash:generateContent", body, map[string]string{"x-goog-api-key": geminiKey})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), `"status"`) || !strings.Contains(string(r.body), "differs from the model in the path") {
		t.Fatalf("status %d, want 400 in Gemini's error shape: %s", r.status, r.body)
	}
	if n := fake.Requests(); n != 0 {
		t.Fatalf("the upstream got %d request(s)", n)
	}
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindBadRequest) || !strings.Contains(summaryText(s), "from app/agent.go:42:Ask") {
		t.Fatalf("want a listed bad-request problem naming the source:\n%s", summaryText(s))
	}
	if files := snapshotFiles(t, dir, "gemini"); len(files) != 0 {
		t.Fatalf("stored %v", files)
	}
}
