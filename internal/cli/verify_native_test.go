package cli

import (
	"bytes"
	"encoding/json"
	"github.com/traceforge/traceforge/internal/provider"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/serve"
)

// recordNative records one Gemini (streamed), one Gemini embeddings and one
// Ollama call into e's folder through the recording proxy.
func recordNative(t *testing.T, e *verifyEnv, up *fakeupstream.Server) {
	t.Helper()
	rec, err := record.New(record.Config{Dir: e.dir, Upstreams: map[provider.Name]string{provider.Gemini: up.URL, provider.Ollama: up.URL}, ManifestInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	calls := []struct {
		path string
		body string
	}{
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
			`{"contents":[{"role":"user","parts":[{"text":"Say hi"}]}],"generationConfig":{"temperature":0,"seed":3,"maxOutputTokens":32}}`},
		{"/v1beta/models/gemini-embedding-001:batchEmbedContents",
			`{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"Ada"}]},"outputDimensionality":4}]}`},
		{"/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"Say hi"}],"options":{"temperature":0,"seed":3,"num_predict":32}}`},
	}
	for i, c := range calls {
		req, _ := http.NewRequest("POST", srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-goog-api-key", "AIzaSy"+strings.Repeat("R", 33))
		req.Header.Set("X-Traceforge-Source", "app/main.go:"+string(rune('1'+i))+":call")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, b.String())
		}
	}
	srv.Close()
	if s := rec.Finish(); s.Failed() {
		var b bytes.Buffer
		render.Record(&b, s, false)
		t.Fatalf("record failed:\n%s", b.String())
	}
}

// TestVerifyLiveNative: verify --live re-sends Gemini and Ollama snapshots
// to their upstreams (Gemini with the key from GEMINI_API_KEY, Ollama with
// none), passes when nothing changed, fails on drift, and needs a Gemini key.
func TestVerifyLiveNative(t *testing.T) {
	up := startFake(t, fakeupstream.Options{})
	e := newVerifyEnv(t)
	recordNative(t, e, up)
	args := []string{"verify", "--live", "--gemini-upstream", up.URL, "--ollama-upstream", up.URL, "--format", "json"}

	code, out, errOut := e.run(args...)
	if code != 2 || !strings.Contains(errOut, "GEMINI_API_KEY") {
		t.Fatalf("without a Gemini key: exit %d\n%s\n%s", code, out, errOut)
	}

	e.env["GEMINI_API_KEY"] = "AIzaSy" + strings.Repeat("L", 33)
	code, out, errOut = e.run(args...)
	if code != 0 {
		t.Fatalf("unchanged: exit %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Upstreams []string `json:"upstreams"`
		Live      []struct {
			File      string `json:"file"`
			Succeeded int    `json:"succeeded"`
		} `json:"live"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Live) != 3 || strings.Join(rep.Upstreams, " ") != "gemini: "+up.URL+" ollama: "+up.URL {
		t.Fatalf("report: %+v\n%s", rep, out)
	}
	last := up.LastRequest()
	if last.Header.Get("x-goog-api-key") == "" && last.Path != "/api/chat" {
		t.Errorf("live request without the key: %+v", last)
	}
	if strings.Contains(out, e.env["GEMINI_API_KEY"]) {
		t.Error("the key reached the report")
	}

	up.SetOptions(fakeupstream.Options{ContentPrefix: "Changed: "})
	code, out, errOut = e.run(args...)
	if code != 1 || !strings.Contains(out, "Changed: ") {
		t.Fatalf("drift: exit %d\n%s\n%s", code, out, errOut)
	}
}
