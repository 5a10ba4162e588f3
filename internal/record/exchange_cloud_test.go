package record_test

import (
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/azure"
	"github.com/traceforge/traceforge/internal/provider/vertex"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/verify"
)

// TestCloudAndOllamaExchanges (DESIGN §13.4): the routes around the LLM
// call of Azure OpenAI (files under the v1 API and the dated API, a
// background response), Vertex AI (Claude's count_tokens, a cached
// content) and Ollama (the model list, a model's details) are recorded as
// exchanges in their providers' folders — never their credentials — and
// replay answers them offline.
func TestCloudAndOllamaExchanges(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "n": hits.Load()})
	}))
	defer up.Close()
	dir := t.TempDir()
	p := newProxy(t, dir, startFake(t, fakeupstream.Options{}), func(c *record.Config) {
		c.Upstreams[azure.Name] = up.URL
		c.Upstreams[vertex.Name] = up.URL
		c.Upstreams[provider.Ollama] = up.URL
	})
	const (
		azureKey = "azure-key-0123456789abcdef0123456789ab"
		token    = "ya29.a0AfB_byC-test-token-0123456789"
	)
	azureHdr := map[string]string{"api-key": azureKey, "Authorization": ""}
	vertexHdr := map[string]string{"Authorization": "Bearer " + token}
	calls := []struct {
		method, path, body string
		hdr                map[string]string
		folder, endpoint   string
	}{
		{"GET", "/openai/v1/files", "", azureHdr, "azure", "GET /openai/v1/files"},
		{"GET", "/openai/files?api-version=2024-10-21", "", azureHdr, "azure", "GET /openai/files"},
		{"POST", "/openai/v1/responses", `{"model":"gpt-4.1-mini","input":"later","background":true}`, azureHdr, "azure", "POST /openai/v1/responses"},
		{"POST", "/v1/projects/p-1/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict", `{"anthropic_version":"vertex-2023-10-16","model":"claude-sonnet-4@20250514","messages":[{"role":"user","content":"hi"}]}`, vertexHdr, "vertex", "POST /v1/projects/p-1/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"},
		{"GET", "/v1/projects/p-1/locations/us-central1/cachedContents/c-9", "", vertexHdr, "vertex", "GET /v1/projects/p-1/locations/us-central1/cachedContents/c-9"},
		{"GET", "/api/tags", "", nil, "ollama", "GET /api/tags"},
		{"POST", "/api/show", `{"model":"llama3.2"}`, nil, "ollama", "POST /api/show"},
	}
	send := func(base string) []string {
		var out []string
		for _, c := range calls {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			r := call(t, c.method, base+c.path, body, c.hdr)
			if r.status != 200 {
				t.Fatalf("%s %s: %d %s", c.method, c.path, r.status, r.body)
			}
			out = append(out, string(r.body))
		}
		return out
	}
	recorded := send(p.srv.URL)
	sum := p.finish()
	if sum.Failed() || sum.Exchanges != len(calls) {
		t.Fatalf("want %d exchanges recorded:\n%s", len(calls), summaryText(sum))
	}
	files := snapshots(t, dir)
	endpoints := map[string]string{}
	for name, data := range files {
		if strings.Contains(string(data), azureKey) || strings.Contains(string(data), token) {
			t.Fatalf("%s holds a credential", name)
		}
		rec := readRecord(t, data)
		endpoints[rec["endpoint"].(string)] = strings.SplitN(name, "/", 2)[0]
	}
	for _, c := range calls {
		if endpoints[c.endpoint] != c.folder {
			t.Errorf("%s %s: stored as %v, want endpoint %q in %s/", c.method, c.path, endpoints, c.endpoint, c.folder)
		}
	}

	before := hits.Load()
	set := verifySet(t, dir)
	rs := verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, verify.Refuse))
	defer srv.Close()
	replayed := send(srv.URL)
	for i := range calls {
		if !sameJSONText(replayed[i], recorded[i]) {
			t.Errorf("%s: replayed %s, recorded %s", calls[i].path, replayed[i], recorded[i])
		}
	}
	if hits.Load() != before {
		t.Fatal("replay reached the upstream")
	}
	if rep := rs.Finish(); len(rep.Misses) != 0 || rep.Exchanges != len(calls) {
		t.Errorf("replay: %d misses, %d exchanges", len(rep.Misses), rep.Exchanges)
	}
}

// TestNamedUpstreamExchanges (DESIGN §13.4, §13.5): a route around the LLM
// call made to a named OpenAI-compatible upstream (GET /u/groq/v1/models)
// is an exchange keyed with the upstream's name, forwarded under the
// upstream's own path prefix: the same call to OpenAI and to Groq is two
// snapshots, and each replays its own answer.
func TestNamedUpstreamExchanges(t *testing.T) {
	var paths []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"llama-3.3-70b-versatile","object":"model"}]}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	p := newProxy(t, dir, startFake(t, fakeupstream.Options{}), func(c *record.Config) {
		c.Named = map[string]string{"groq": up.URL + "/openai/v1"}
	})
	groq := call(t, "GET", p.srv.URL+"/u/groq/v1/models", nil, nil)
	openai := call(t, "GET", p.srv.URL+"/v1/models", nil, nil)
	// (The fake OpenAI upstream has no model list: its 404 is recorded
	// too, as every exchange answer is.)
	if groq.status != 200 || string(groq.body) == string(openai.body) {
		t.Fatalf("groq %d %s / openai %d %s", groq.status, groq.body, openai.status, openai.body)
	}
	if len(paths) != 1 || paths[0] != "/openai/v1/models" {
		t.Fatalf("the named upstream was asked for %v", paths)
	}
	if sum := p.finish(); sum.Failed() || sum.Exchanges != 2 {
		t.Fatalf("%s", summaryText(sum))
	}
	endpoints := map[string]bool{}
	for _, data := range snapshots(t, dir) {
		endpoints[readRecord(t, data)["endpoint"].(string)] = true
	}
	if !endpoints["GET /u/groq/v1/models"] || !endpoints["GET /v1/models"] {
		t.Fatalf("stored endpoints %v", endpoints)
	}
	set := verifySet(t, dir)
	rs := verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, verify.Refuse))
	defer srv.Close()
	for path, want := range map[string]reply{"/u/groq/v1/models": groq, "/v1/models": openai} {
		if got := call(t, "GET", srv.URL+path, nil, nil); got.status != want.status || !sameJSONText(string(got.body), string(want.body)) {
			t.Errorf("%s replayed %s, recorded %s", path, got.body, want.body)
		}
	}
	if len(paths) != 1 {
		t.Fatal("replay reached the named upstream")
	}
}

// TestMultipartUploadKeyedWithoutBoundary (DESIGN §13.4): an SDK draws a
// new multipart boundary for every upload, so the same file uploaded in a
// replayed run is keyed with the boundary written as provider.KeyBoundary
// — it replays — while the stored body keeps the bytes as sent.
func TestMultipartUploadKeyedWithoutBoundary(t *testing.T) {
	dir := t.TempDir()
	p := newProxy(t, dir, startFake(t, fakeupstream.Options{}), nil)
	upload := func(base, boundary string) reply {
		t.Helper()
		var b strings.Builder
		mw := multipart.NewWriter(&b)
		if err := mw.SetBoundary(boundary); err != nil {
			t.Fatal(err)
		}
		_ = mw.WriteField("purpose", "user_data")
		fw, _ := mw.CreateFormFile("file", "notes.txt")
		_, _ = fw.Write([]byte("traceforge records LLM calls"))
		_ = mw.Close()
		return call(t, "POST", base+"/v1/files", []byte(b.String()), map[string]string{"Content-Type": mw.FormDataContentType()})
	}
	rec := upload(p.srv.URL, "----formdata-undici-0123456789")
	if rec.status != 200 {
		t.Fatalf("upload: %d %s", rec.status, rec.body)
	}
	if sum := p.finish(); sum.Failed() || sum.Exchanges != 1 {
		t.Fatalf("%s", summaryText(sum))
	}
	files := snapshots(t, dir)
	for name, data := range files {
		if !strings.Contains(string(data), "----formdata-undici-0123456789") {
			t.Fatalf("%s: the stored body lost the boundary as sent", name)
		}
	}
	set := verifySet(t, dir)
	rs := verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, verify.Refuse))
	defer srv.Close()
	again := upload(srv.URL, "a-different-boundary-9876543210")
	if again.status != 200 || !sameJSONText(string(again.body), string(rec.body)) {
		t.Fatalf("replayed upload: %d %s", again.status, again.body)
	}
	other := func() reply {
		var b strings.Builder
		mw := multipart.NewWriter(&b)
		_ = mw.WriteField("purpose", "user_data")
		fw, _ := mw.CreateFormFile("file", "notes.txt")
		_, _ = fw.Write([]byte("another file"))
		_ = mw.Close()
		return call(t, "POST", srv.URL+"/v1/files", []byte(b.String()), map[string]string{"Content-Type": mw.FormDataContentType()})
	}()
	if other.status != 404 {
		t.Fatalf("another file's upload was answered: %d %s", other.status, other.body)
	}
}
