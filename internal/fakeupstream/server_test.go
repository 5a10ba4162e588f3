package fakeupstream

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const chatBody = `{"model":"gpt-4o","messages":[{"role":"user","content":"Hello determinism"}]}`
const msgBody = `{"model":"claude-x","max_tokens":50,"messages":[{"role":"user","content":"Hello determinism"}]}`

var volatile = regexp.MustCompile(`("id": ?")[^"]*(")|("created": ?)[0-9]+|(_fake)[0-9]+`)

func normalize(b []byte) string { return volatile.ReplaceAllString(string(b), "$1$3$4X$2") }

func TestDeterminism(t *testing.T) {
	s := start(t, Options{})
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", chatBody},
		{"/v1/chat/completions", strings.Replace(chatBody, `"model"`, `"stream":true,"model"`, 1)},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"Weather in Paris"}],` + weatherTools + `}`},
		{"/v1/completions", `{"model":"m","prompt":"Hello determinism"}`},
		{"/v1/messages", msgBody},
		{"/v1/messages", strings.Replace(msgBody, `"model"`, `"stream":true,"model"`, 1)},
		{"/v1/messages", `{"model":"c","stream":true,"messages":[{"role":"user","content":"Weather in Paris"}],` + claudeTools + `}`},
	} {
		_, b1 := do(t, s.URL+tc.path, tc.body, hdr{"Authorization": "Bearer k"})
		_, b2 := do(t, s.URL+tc.path, tc.body, hdr{"Authorization": "Bearer k"})
		if bytes.Equal(b1, b2) {
			t.Errorf("%s: two calls gave byte-identical bodies (ids must differ per call)", tc.path)
		}
		if normalize(b1) != normalize(b2) {
			t.Errorf("%s: bodies differ beyond ids:\n%s\n%s", tc.path, b1, b2)
		}
	}
	// Ids differ, content equal, created differs.
	_, b1 := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
	_, b2 := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
	m1, m2 := obj(t, b1), obj(t, b2)
	if m1["id"] == m2["id"] || m1["created"] == m2["created"] {
		t.Fatalf("ids %v %v created %v %v", m1["id"], m2["id"], m1["created"], m2["created"])
	}
	if get(t, m1, "choices", 0, "message", "content") != get(t, m2, "choices", 0, "message", "content") {
		t.Fatal("content differs")
	}
}

func TestDifferentPromptsDiffer(t *testing.T) {
	s := start(t, Options{})
	_, b1 := do(t, s.URL+"/v1/messages", msgBody, anthropicAuth)
	_, b2 := do(t, s.URL+"/v1/messages", strings.Replace(msgBody, "determinism", "world", 1), anthropicAuth)
	if get(t, obj(t, b1), "content", 0, "text") == get(t, obj(t, b2), "content", 0, "text") {
		t.Fatal("different prompts, same answer")
	}
}

func TestNondeterministic(t *testing.T) {
	s := start(t, Options{Nondeterministic: true})
	_, b1 := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
	_, b2 := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
	c1 := get(t, obj(t, b1), "choices", 0, "message", "content").(string)
	c2 := get(t, obj(t, b2), "choices", 0, "message", "content").(string)
	if c1 == c2 || !strings.HasPrefix(c1, "Echo: Hello determinism") {
		t.Fatalf("%q %q", c1, c2)
	}
	_, s1 := do(t, s.URL+"/v1/messages", strings.Replace(msgBody, `"model"`, `"stream":true,"model"`, 1), anthropicAuth)
	_, s2 := do(t, s.URL+"/v1/messages", strings.Replace(msgBody, `"model"`, `"stream":true,"model"`, 1), anthropicAuth)
	if assembleMessages(t, s1).text == assembleMessages(t, s2).text {
		t.Fatal("streamed answers equal")
	}
}

func TestDriftKnobs(t *testing.T) {
	s := start(t, Options{ModelSuffix: "-2026-01-01", ContentPrefix: "Sure! "})
	_, b := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
	m := obj(t, b)
	if get(t, m, "model") != "gpt-4o-2026-01-01" || get(t, m, "choices", 0, "message", "content") != "Sure! Echo: Hello determinism" {
		t.Fatalf("%v", m)
	}
	_, sb := do(t, s.URL+"/v1/messages", strings.Replace(msgBody, `"model"`, `"stream":true,"model"`, 1), anthropicAuth)
	ms := assembleMessages(t, sb)
	if ms.message["model"] != "claude-x-2026-01-01" || ms.text != "Sure! Echo: Hello determinism" {
		t.Fatalf("%+v", ms)
	}
	// SetOptions at runtime restores the normal behaviour.
	s.SetOptions(Options{})
	_, b = do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
	if get(t, obj(t, b), "model") != "gpt-4o" {
		t.Fatal("SetOptions had no effect")
	}
	if s.Options() != (Options{}) {
		t.Fatal("Options() does not reflect SetOptions")
	}
}

func TestFailStatus(t *testing.T) {
	s := start(t, Options{})
	for _, tc := range []struct {
		status         int
		oaType, anType string
	}{
		{400, "invalid_request_error", "invalid_request_error"},
		{429, "requests", "rate_limit_error"},
		{500, "server_error", "api_error"},
		{503, "server_error", "api_error"},
		{529, "server_error", "overloaded_error"},
	} {
		s.SetOptions(Options{FailStatus: tc.status})
		resp, b := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d: got %d", tc.status, resp.StatusCode)
		}
		e := get(t, obj(t, b), "error")
		if get(t, e, "type") != tc.oaType || get(t, e, "message") == "" || !has(e, "code") || !has(e, "param") {
			t.Fatalf("%d: openai error %s", tc.status, b)
		}
		resp, b = do(t, s.URL+"/v1/messages", msgBody, anthropicAuth)
		if resp.StatusCode != tc.status {
			t.Fatalf("%d: got %d", tc.status, resp.StatusCode)
		}
		m := obj(t, b)
		if get(t, m, "type") != "error" || get(t, m, "error", "type") != tc.anType {
			t.Fatalf("%d: anthropic error %s", tc.status, b)
		}
		// Streams fail the same way, before any event.
		resp, b = do(t, s.URL+"/v1/messages", strings.Replace(msgBody, `"model"`, `"stream":true,"model"`, 1), anthropicAuth)
		if resp.StatusCode != tc.status || bytes.Contains(b, []byte("event:")) {
			t.Fatalf("%d: stream got %d %s", tc.status, resp.StatusCode, b)
		}
	}
}

func TestAuthRequired(t *testing.T) {
	s := start(t, Options{})
	for _, h := range []hdr{{}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer "}, {"x-api-key": ""}} {
		resp, b := do(t, s.URL+"/v1/chat/completions", chatBody, h)
		if resp.StatusCode != 401 {
			t.Fatalf("%v: status %d", h, resp.StatusCode)
		}
		if get(t, obj(t, b), "error", "type") != "invalid_request_error" {
			t.Fatalf("%s", b)
		}
	}
	resp, b := do(t, s.URL+"/v1/messages", msgBody, hdr{})
	if resp.StatusCode != 401 || get(t, obj(t, b), "error", "type") != "authentication_error" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	for _, h := range []hdr{{"Authorization": "Bearer k"}, {"authorization": "bearer k"}, {"x-api-key": "k"}} {
		if resp, b := do(t, s.URL+"/v1/chat/completions", chatBody, h); resp.StatusCode != 200 {
			t.Fatalf("%v: %d %s", h, resp.StatusCode, b)
		}
	}
}

func TestBadRequestsAndRouting(t *testing.T) {
	s := start(t, Options{})
	for _, tc := range []struct {
		path, body string
		status     int
	}{
		{"/v1/chat/completions", `{"model":`, 400},
		{"/v1/chat/completions", `"just a string"`, 400},
		{"/v1/chat/completions", ``, 400},
		{"/v1/chat/completions", `{"messages":[]}`, 400},
		{"/v1/chat/completions", `{"model":"m"}`, 400},
		{"/v1/chat/completions", `{"model":"m","messages":[],"stream":"yes"}`, 400},
		{"/v1/completions", `{"model":"m"}`, 400},
		{"/v1/models", `{}`, 404},
		{"/v1/responses", `{}`, 400},
		{"/v1/responses", `{"model":"m","input":{"a":1}}`, 400},
		{"/v1/responses/resp_x/input_items", `{}`, 404},
		{"/v1/embeddings", `{"model":"m"}`, 400},
		{"/v1/embeddings", `{"model":"m","input":""}`, 400},
		{"/v1/embeddings", `{"model":"m","input":"x","encoding_format":"int8"}`, 400},
		{"/v1/embeddings", `{"model":"text-embedding-ada-002","input":"x","dimensions":8}`, 400},
		{"/v1/embeddings", `{"model":"text-embedding-3-small","input":"x","dimensions":2000}`, 400},
		{"/v1/models/gemini-2.5-flash:predict", `{}`, 404},
		{"/v2/models/gemini-2.5-flash:generateContent", `{}`, 404},
		{"/v1/messages/count_tokens", `{}`, 400},
		{"/v1/messages/batches", `{}`, 404},
		{"/", ``, 404},
		{"/prefix/v1/chat/completions", chatBody, 200},
		{"/chat/completions", chatBody, 200},
	} {
		resp, b := do(t, s.URL+tc.path, tc.body, openAIAuth)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %q: status %d, want %d: %s", tc.path, tc.body, resp.StatusCode, tc.status, b)
			continue
		}
		if tc.status != 200 {
			e := get(t, obj(t, b), "error")
			if get(t, e, "message") == "" || get(t, e, "type") != "invalid_request_error" {
				t.Errorf("%s: error %s", tc.path, b)
			}
		}
	}
	resp, err := rawClient.Get(s.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

func TestResetMidStream(t *testing.T) {
	s := start(t, Options{ResetMidStream: true})
	for _, tc := range []struct{ path, body, sep string }{
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"a fairly long prompt to answer"}]}`, "\n\n"},
		{"/v1/completions", `{"model":"m","stream":true,"prompt":"a b c"}`, "\n\n"},
		{"/v1/messages", `{"model":"c","stream":true,"max_tokens":9,"messages":[{"role":"user","content":"a b c"}]}`, "\n\n"},
		{"/v1/responses", `{"model":"m","stream":true,"input":"a b c"}`, "\n\n"},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"a b c"}]}]}`, "\r\n\r\n"},
		{"/api/chat", `{"model":"m","messages":[{"role":"user","content":"a b c"}]}`, "\n"},
		{"/api/generate", `{"model":"m","prompt":"a b c"}`, "\n"},
	} {
		resp, err := doErr(s.URL+tc.path, tc.body, hdr{"Authorization": "Bearer k", "x-goog-api-key": "k"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", tc.path, resp.StatusCode)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatalf("%s: body read without error after a reset:\n%s", tc.path, b)
		}
		if n := bytes.Count(b, []byte(tc.sep)); n != 2 {
			t.Fatalf("%s: %d events before the reset (want 2): %q (err %v)", tc.path, n, b, err)
		}
	}
	// Non-streamed calls are unaffected.
	if resp, _ := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	// The server survives.
	s.SetOptions(Options{})
	_, b := do(t, s.URL+"/v1/messages", `{"model":"c","stream":true,"messages":[{"role":"user","content":"ok"}]}`, openAIAuth)
	if assembleMessages(t, b).text != "Echo: ok" {
		t.Fatal("stream broken after resets")
	}
}

func TestResetMidStreamInProcess(t *testing.T) {
	// httptest servers support hijacking as well.
	ts := httptest.NewServer(New(Options{ResetMidStream: true}))
	defer ts.Close()
	resp, err := doErr(ts.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"a b c d"}]}`, openAIAuth)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatal("no error after reset")
	}
}

func TestDelays(t *testing.T) {
	const delay = 150 * time.Millisecond
	s := start(t, Options{FirstByteDelay: delay})
	t0 := time.Now()
	resp, err := doErr(s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < delay {
		t.Fatalf("headers after %v, want >= %v", d, delay)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	t0 = time.Now()
	do(t, s.URL+"/v1/messages", msgBody, anthropicAuth)
	if d := time.Since(t0); d < delay {
		t.Fatalf("non-streamed answer after %v, want >= %v", d, delay)
	}

	const chunk = 30 * time.Millisecond
	s.SetOptions(Options{ChunkDelay: chunk})
	t0 = time.Now()
	_, b := do(t, s.URL+"/v1/messages", `{"model":"c","stream":true,"messages":[{"role":"user","content":"one two"}]}`, anthropicAuth)
	events := len(parseSSE(t, b))
	if d := time.Since(t0); d < time.Duration(events-1)*chunk {
		t.Fatalf("%d events in %v, want >= %v", events, d, time.Duration(events-1)*chunk)
	}
}

func TestDelayHonoursCancellation(t *testing.T) {
	s := start(t, Options{FirstByteDelay: 10 * time.Second})
	c := &http.Client{Timeout: 100 * time.Millisecond}
	t0 := time.Now()
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(chatBody))
	req.Header.Set("Authorization", "Bearer k")
	if _, err := c.Do(req); err == nil {
		t.Fatal("expected a timeout")
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Close blocked on a delayed handler")
	}
	if time.Since(t0) > 5*time.Second {
		t.Fatal("too slow")
	}
}

func TestGzip(t *testing.T) {
	s := start(t, Options{Gzip: true})
	resp, b := do(t, s.URL+"/v1/chat/completions", chatBody, hdr{"Authorization": "Bearer k", "Accept-Encoding": "gzip, deflate, br"})
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", resp.Header)
	}
	plain := gunzip(t, b)
	if get(t, obj(t, plain), "choices", 0, "message", "content") != "Echo: Hello determinism" {
		t.Fatalf("%s", plain)
	}
	// Errors are JSON answers too.
	resp, b = do(t, s.URL+"/v1/messages", msgBody, hdr{"Accept-Encoding": "gzip"})
	if resp.StatusCode != 401 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("error: %d %v", resp.StatusCode, resp.Header)
	}
	if pb := gunzip(t, b); !bytes.Contains(pb, []byte("authentication_error")) {
		t.Fatalf("%s", pb)
	}
	// No Accept-Encoding, or gzip refused: plain.
	for _, ae := range []string{"", "identity", "gzip;q=0", "br", "*;q=0"} {
		resp, b := do(t, s.URL+"/v1/chat/completions", chatBody, hdr{"Authorization": "Bearer k", "Accept-Encoding": ae})
		if resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%q: compressed", ae)
		}
		obj(t, b)
	}
	// Streams are never compressed.
	resp, b = do(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, hdr{"Authorization": "Bearer k", "Accept-Encoding": "gzip"})
	if resp.Header.Get("Content-Encoding") != "" {
		t.Fatal("stream compressed")
	}
	assembleChat(t, b)
	// Without the option nothing is compressed.
	s.SetOptions(Options{})
	if resp, _ := do(t, s.URL+"/v1/chat/completions", chatBody, hdr{"Authorization": "Bearer k", "Accept-Encoding": "gzip"}); resp.Header.Get("Content-Encoding") != "" {
		t.Fatal("compressed without Gzip")
	}
	// Go's default client transparently decodes.
	s.SetOptions(Options{Gzip: true})
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(chatBody))
	req.Header.Set("Authorization", "Bearer k")
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := io.ReadAll(dresp.Body)
	dresp.Body.Close()
	if !dresp.Uncompressed {
		t.Fatal("default client did not get a compressed answer")
	}
	obj(t, db)
}

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "x-gzip": true, "deflate, gzip;q=0.5": true,
		"gzip;q=0": false, "*": true, "*;q=0": false, "br, *": true, "gzip;q=0, *": false, "identity": false,
	} {
		if got := acceptsGzip([]string{ae}); got != want {
			t.Errorf("%q: %v, want %v", ae, got, want)
		}
	}
}

func TestRequestsAndLastRequest(t *testing.T) {
	s := start(t, Options{})
	if s.Requests() != 0 || s.LastRequest().Method != "" {
		t.Fatal("not zero at start")
	}
	do(t, s.URL+"/v1/chat/completions?x=1", chatBody, hdr{"Authorization": "Bearer sk-secret", "X-Custom": "v"})
	do(t, s.URL+"/nope", "{}", hdr{})
	if s.Requests() != 2 {
		t.Fatalf("requests %d", s.Requests())
	}
	if s.LastRequest().Path != "/nope" {
		t.Fatal("last request not updated")
	}
	do(t, s.URL+"/v1/chat/completions?x=1", chatBody, hdr{"Authorization": "Bearer sk-secret", "X-Custom": "v"})
	c := s.LastRequest()
	if c.Method != "POST" || c.Path != "/v1/chat/completions" || c.RawQuery != "x=1" || string(c.Body) != chatBody {
		t.Fatalf("%+v", c)
	}
	if c.Header.Get("Authorization") != "Bearer sk-secret" || c.Header.Get("X-Custom") != "v" {
		t.Fatalf("headers %v", c.Header)
	}
	// A copy: mutating it does not change the stored one.
	c.Header.Set("X-Custom", "changed")
	c.Body[0] = 'X'
	if c2 := s.LastRequest(); c2.Header.Get("X-Custom") != "v" || c2.Body[0] != '{' {
		t.Fatal("LastRequest shares memory")
	}
}

func TestNewInProcess(t *testing.T) {
	h := New(Options{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(msgBody))
	req.Header.Set("x-api-key", "k")
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || get(t, obj(t, rec.Body.Bytes()), "content", 0, "text") != "Echo: Hello determinism" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	// Streams work with a recorder (it flushes).
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	h.ServeHTTP(rec, req)
	if cs := assembleChat(t, rec.Body.Bytes()); cs.content != "Echo: x" {
		t.Fatalf("%+v", cs)
	}
	if h.(*Handler).Requests() != 2 {
		t.Fatal("handler did not count")
	}
}

func TestConcurrentClients(t *testing.T) {
	s := start(t, Options{})
	const clients = 64
	var wg sync.WaitGroup
	errs := make(chan error, clients*4)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 4; j++ {
				word := fmt.Sprintf("w%dx%d", i, j)
				stream := (i+j)%2 == 0
				var path, body string
				switch (i + j) % 3 {
				case 0:
					path = "/v1/chat/completions"
					body = fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"say %s"}]}`, stream, word)
				case 1:
					path = "/v1/completions"
					body = fmt.Sprintf(`{"model":"m","stream":%v,"prompt":"say %s"}`, stream, word)
				default:
					path = "/v1/messages"
					body = fmt.Sprintf(`{"model":"m","stream":%v,"max_tokens":9,"messages":[{"role":"user","content":"say %s"}]}`, stream, word)
				}
				resp, err := doErr(s.URL+path, body, hdr{"Authorization": "Bearer k"})
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					errs <- fmt.Errorf("%s: %d %v", path, resp.StatusCode, err)
					return
				}
				// Each answer carries its own prompt word and no other.
				if !bytes.Contains(b, []byte(word)) || bytes.Count(b, []byte(" w")) > bytes.Count(b, []byte(word)) {
					errs <- fmt.Errorf("%s: answer without %q: %s", path, word, b)
				}
				_ = s.LastRequest()
			}
		}(i)
	}
	// Options change concurrently with traffic.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; k < 50; k++ {
			s.SetOptions(Options{ChunkDelay: time.Duration(k%2) * time.Microsecond})
			_ = s.Options()
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := s.Requests(); got != clients*4 {
		t.Fatalf("requests %d", got)
	}
}

func TestStartOnUnspecifiedHost(t *testing.T) {
	s, err := StartOn("0.0.0.0:0", Options{})
	if err != nil {
		t.Skip(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || strings.HasSuffix(s.URL, ":0") {
		t.Fatalf("URL %q", s.URL)
	}
	if resp, _ := do(t, s.URL+"/v1/chat/completions", chatBody, openAIAuth); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	s.Close()
	s.Close() // idempotent
}

// The drift knobs and gzip reach the Responses, Gemini and Ollama answers.
func TestKnobsOnNewFormats(t *testing.T) {
	s := start(t, Options{ModelSuffix: "-new", ContentPrefix: "Sure! ", Gzip: true})
	_, b := do(t, s.URL+"/v1/responses", `{"model":"m","input":"hi"}`, hdr{"Authorization": "Bearer k"})
	if m := obj(t, b); get(t, m, "model") != "m-new" || get(t, m, "output", 0, "content", 0, "text") != "Sure! Echo: hi" {
		t.Fatalf("responses %s", b)
	}
	_, b = do(t, s.URL+"/v1beta/models/g:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`, geminiAuth)
	if m := obj(t, b); get(t, m, "modelVersion") != "g-new" || get(t, m, "candidates", 0, "content", "parts", 0, "text") != "Sure! Echo: hi" {
		t.Fatalf("gemini %s", b)
	}
	_, b = do(t, s.URL+"/api/chat", `{"model":"l","stream":false,"messages":[{"role":"user","content":"hi"}]}`, nil)
	if m := obj(t, b); get(t, m, "model") != "l-new" || get(t, m, "message", "content") != "Sure! Echo: hi" {
		t.Fatalf("ollama %s", b)
	}
	_, e1 := do(t, s.URL+"/v1/embeddings", `{"model":"e","input":"hi"}`, openAIAuth)
	s.SetOptions(Options{})
	_, e2 := do(t, s.URL+"/v1/embeddings", `{"model":"e","input":"hi"}`, openAIAuth)
	if get(t, obj(t, e1), "model") != "e-new" || jsonEqual(t, get(t, obj(t, e1), "data", 0, "embedding"), get(t, obj(t, e2), "data", 0, "embedding")) {
		t.Fatal("ContentPrefix did not move the embedding")
	}
	s.SetOptions(Options{Gzip: true})
	for _, tc := range []struct{ path, body string }{
		{"/v1/embeddings", `{"model":"e","input":"hi"}`},
		{"/v1beta/models/g:embedContent", `{"content":{"parts":[{"text":"hi"}]}}`},
		{"/api/embed", `{"model":"l","input":"hi"}`},
	} {
		resp, b := do(t, s.URL+tc.path, tc.body, hdr{"Authorization": "Bearer k", "x-goog-api-key": "k", "Accept-Encoding": "gzip"})
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: not gzipped", tc.path)
		}
		obj(t, gunzip(t, b))
	}
}

// Delays apply to NDJSON and Gemini streams too.
func TestDelaysOnNewStreams(t *testing.T) {
	s := start(t, Options{ChunkDelay: 20 * time.Millisecond})
	for _, tc := range []struct{ path, body string }{
		{"/api/generate", `{"model":"m","prompt":"a b c d"}`},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"a b c d"}]}]}`},
	} {
		t0 := time.Now()
		resp, _ := do(t, s.URL+tc.path, tc.body, geminiAuth)
		if resp.StatusCode != 200 || time.Since(t0) < 60*time.Millisecond {
			t.Fatalf("%s: %d after %v", tc.path, resp.StatusCode, time.Since(t0))
		}
	}
}
