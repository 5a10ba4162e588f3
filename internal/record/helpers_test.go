package record_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// testKey is an OpenAI-shaped key the tests send as the application's key;
// it must never reach the snapshot folder.
var testKey = "sk-proj-" + strings.Repeat("A", 74) + "T3BlbkFJ" + strings.Repeat("A", 74)

const srcHeader = "app/agent.go:42:Ask"

func startFake(t *testing.T, opts fakeupstream.Options) *fakeupstream.Server {
	t.Helper()
	f, err := fakeupstream.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// proxy is a Recorder served on loopback.
type proxy struct {
	t    *testing.T
	rec  *record.Recorder
	srv  *httptest.Server
	dir  string
	fake *fakeupstream.Server
	log  *syncBuffer
}

func newProxy(t *testing.T, dir string, fake *fakeupstream.Server, mod func(*record.Config)) *proxy {
	t.Helper()
	log := &syncBuffer{}
	cfg := record.Config{
		Dir:              dir,
		Display:          ".ai-snapshots",
		Upstreams:        map[provider.Name]string{provider.OpenAI: fake.URL + "/v1", provider.Anthropic: fake.URL},
		Log:              log,
		ManifestInterval: -1,
	}
	if mod != nil {
		mod(&cfg)
	}
	rec, err := record.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	p := &proxy{t: t, rec: rec, srv: srv, dir: dir, fake: fake, log: log}
	t.Cleanup(func() { srv.Close(); rec.Finish() })
	return p
}

// finish stops the server and returns the summary.
func (p *proxy) finish() *result.RecordSummary {
	p.srv.Close()
	return p.rec.Finish()
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends one call through the proxy the way an SDK does.
func (p *proxy) do(path string, body any, hdr map[string]string) reply {
	p.t.Helper()
	r, err := send(p.srv.URL+path, body, hdr)
	if err != nil {
		p.t.Fatalf("POST %s: %v", path, err)
	}
	return r
}

func send(url string, body any, hdr map[string]string) (reply, error) {
	var data []byte
	switch b := body.(type) {
	case []byte:
		data = b
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			return reply{}, err
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("x-api-key", testKey)
	if strings.HasSuffix(url, "/messages") {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if _, ok := hdr["X-Traceforge-Source"]; !ok {
		req.Header.Set("X-Traceforge-Source", srcHeader)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, err
}

func openaiChat(prompt string) map[string]any {
	return map[string]any{
		"model":       "gpt-4o-mini",
		"messages":    []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": prompt}},
		"temperature": 0,
		"seed":        7,
		"max_tokens":  64,
	}
}

func openaiCompletion(prompt string) map[string]any {
	return map[string]any{"model": "gpt-3.5-turbo-instruct", "prompt": prompt, "temperature": 0, "seed": 7, "max_tokens": 64}
}

func anthropicMsg(prompt string) map[string]any {
	return map[string]any{
		"model":       "claude-sonnet-4-5",
		"max_tokens":  64,
		"temperature": 0,
		"system":      "Be brief.",
		"messages":    []any{map[string]any{"role": "user", "content": prompt}},
	}
}

func withTools(p string, req map[string]any) map[string]any {
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}
	if p == "anthropic" {
		req["tools"] = []any{map[string]any{"name": "get_weather", "description": "Weather for a city", "input_schema": schema}}
	} else {
		req["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Weather for a city", "parameters": schema}}}
	}
	return req
}

func streamed(req map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range req {
		c[k] = v
	}
	c["stream"] = true
	return c
}

// files returns every file below dir (relative slash paths → bytes).
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	return out
}

// snapshots returns the snapshot files (<provider>/<id>.json) below dir.
func snapshots(t *testing.T, dir string) map[string][]byte {
	out := map[string][]byte{}
	for rel, b := range files(t, dir) {
		if _, _, ok := snapshot.ValidRelPath(rel); ok {
			out[rel] = b
		}
	}
	return out
}

// verifySet runs the static checks over what the test wrote: every file
// must pass (DESIGN: every snapshot record writes passes verify).
func verifySet(t *testing.T, dir string) *check.SetResult {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			t.Errorf("static verification: %s", f.Error())
		}
	}
	return set
}

// noKeyOnDisk fails when the test API key appears in any file below dir.
func noKeyOnDisk(t *testing.T, dir string) {
	t.Helper()
	for rel, b := range files(t, dir) {
		if bytes.Contains(b, []byte(testKey)) || bytes.Contains(b, []byte("T3BlbkFJ")) {
			t.Errorf("%s holds the API key", rel)
		}
	}
}

// readRecord returns the single record of a snapshot file.
func readRecord(t *testing.T, data []byte) map[string]any {
	t.Helper()
	v, err := snapshot.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)["snapshots"].([]any)[0].(map[string]any)
}

// withBody is rec (a decoded record of provider p) with the body a stream
// stored as its events assembles to (format 1.2.0 stores none), as verify
// and replay read it.
func withBody(t *testing.T, p string, rec map[string]any) map[string]any {
	t.Helper()
	resp := rec["response"].(map[string]any)
	w, ok := resp["wire"].(map[string]any)
	if !ok || resp["body"] != nil {
		return rec
	}
	ws, err := snapshot.WireStreamFromValue(w)
	if err != nil {
		t.Fatal(err)
	}
	f := registry.Lookup(provider.Name(p), provider.Endpoint(rec["endpoint"].(string)))
	body, err := provider.AssembleWire(f, ws)
	if err != nil {
		t.Fatalf("the stored events do not assemble: %v", err)
	}
	resp["body"] = body
	return rec
}

// sseData returns the data payloads of an SSE body.
func sseData(body []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func problemKinds(s *result.RecordSummary) []record.Kind {
	var out []record.Kind
	for _, p := range s.Problems {
		out = append(out, record.Kind(p.Rule))
	}
	return out
}

func hasKind(s *result.RecordSummary, k record.Kind) bool {
	for _, p := range s.Problems {
		if p.Rule == string(k) {
			return true
		}
	}
	return false
}

func summaryText(s *result.RecordSummary) string {
	var b bytes.Buffer
	render.Record(&b, s, true)
	return b.String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
