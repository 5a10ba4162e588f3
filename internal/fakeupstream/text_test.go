package fakeupstream

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextPieces(t *testing.T) {
	for _, s := range []string{"", "a", "Echo: hi there", "  lead", "trail  ", "multi\nline\n\ntext", "héllo wörld ✓"} {
		p := textPieces(s)
		if strings.Join(p, "") != s {
			t.Errorf("%q: pieces %q do not rebuild it", s, p)
		}
	}
	if got := textPieces("Echo: hi there"); !reflect.DeepEqual(got, []string{"Echo:", " hi", " there"}) {
		t.Errorf("pieces %q", got)
	}
}

func TestBytePieces(t *testing.T) {
	for _, s := range []string{"", `{"city":"Paris"}`, `{"city":"Zürich ✓✓✓"}`} {
		p := bytePieces(s, 6)
		if strings.Join(p, "") != s {
			t.Errorf("%q: %q", s, p)
		}
		for _, x := range p {
			if !utf8.ValidString(x) || x == "" {
				t.Errorf("%q: bad piece %q", s, x)
			}
		}
	}
}

func TestCandidates(t *testing.T) {
	for prompt, want := range map[string][]string{
		"What's the weather in Paris?":            {"Paris"},
		"Weather in both Paris and London, I ask": {"Paris", "London"},
		"weather please":                          {"please"},
		"":                                        {"unknown"},
		"!!!":                                     {"unknown"},
	} {
		if got := candidates(prompt); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q, want %q", prompt, got, want)
		}
	}
}

func TestBuildArgs(t *testing.T) {
	schema := `{"type":"object","properties":{"city":{"type":"string"},"n":{"type":["integer","null"]},"ok":{"type":"boolean"},"tags":{"type":"array"},"loc":{"type":"object","properties":{"x":{"type":"number"}}},"unit":{"enum":["c","f"]}}}`
	got := buildArgs([]byte(schema), "Paris")
	want := `{"city":"Paris","loc":{"x":1},"n":1,"ok":true,"tags":["Paris"],"unit":"c"}`
	if got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
	if got := buildArgs(nil, "x"); got != "{}" {
		t.Fatalf("no schema: %s", got)
	}
}

// FuzzHandler feeds arbitrary bodies to every endpoint: no panic, and the
// answer is a JSON object or a well-formed stream.
func FuzzHandler(f *testing.F) {
	for _, seed := range []string{
		chatBody, msgBody, `{"model":"m","prompt":"x","stream":true}`,
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"both A B"}],` + weatherTools + `}`,
		`{"model":"c","stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"r"}]}]}],` + claudeTools + `}`,
		`{"model":"m","messages":[{"role":"tool","content":null}],"max_tokens":-1}`,
		`{`, `null`, `[]`,
		`{"model":"m","stream":true,"input":[{"role":"user","content":"Weather in Paris"},{"type":"function_call_output","call_id":"c","output":"r"}],"reasoning":{"summary":"auto"}}`,
		`{"model":"o3","input":"Weather in Paris",` + respTools + `}`,
		`{"model":"m","input":[[1,2],[3]],"encoding_format":"base64","dimensions":4}`,
		`{"contents":[{"parts":[{"text":"Weather in Paris"}]}],` + geminiTools + `,"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`,
		`{"requests":[{"content":{"parts":[{"text":"x"}]},"outputDimensionality":3}]}`,
		`{"model":"m","messages":[{"role":"user","content":"Weather in Paris"}],"think":true,` + ollamaTools + `}`,
		`{"model":"m","prompt":"x","stream":false,"options":{"num_predict":1}}`,
	} {
		for _, p := range []string{"/v1/chat/completions", "/v1/completions", "/v1/messages", "/v1/responses", "/v1/embeddings",
			"/v1beta/models/g:generateContent", "/v1beta/models/g:streamGenerateContent", "/v1/models/g:embedContent",
			"/v1/models/g:batchEmbedContents", "/api/chat", "/api/generate", "/api/embed"} {
			f.Add(p, seed)
		}
	}
	h := New(Options{})
	f.Fuzz(func(t *testing.T, path, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.URL = &url.URL{Path: path, RawQuery: "alt=sse"}
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("x-goog-api-key", "k")
		h.ServeHTTP(rec, req)
		ct := rec.Header().Get("Content-Type")
		if ct != "application/json" && rec.Code != 200 {
			t.Fatalf("%s with status %d", ct, rec.Code)
		}
		switch {
		case ct == "text/event-stream" && strings.Contains(path, ":stream"):
			parseCRLFSSE(t, rec.Body.Bytes())
		case ct == "text/event-stream":
			parseSSE(t, rec.Body.Bytes())
		case ct == "application/x-ndjson":
			parseNDJSON(t, rec.Body.Bytes())
		default:
			obj(t, rec.Body.Bytes())
		}
	})
}

func TestObject(t *testing.T) {
	o := fields("b", 1, "a", "x<y")
	p := o.with("b", 2).with("c", fields())
	if got := string(marshal(p, "")); got != `{"b":2,"a":"x<y","c":{}}` {
		t.Fatalf("got %s", got)
	}
	if string(marshal(o, "")) != `{"b":1,"a":"x<y"}` || o.get("a") != "x<y" || o.get("z") != nil {
		t.Fatal("with changed the original, or get is wrong")
	}
}
