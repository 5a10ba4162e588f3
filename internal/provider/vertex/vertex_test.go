package vertex

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

func TestRoutes(t *testing.T) {
	const proj = "/v1/projects/p-1/locations/us-central1/publishers/"
	cases := []struct {
		method, path string
		f            provider.Format
		want         provider.Endpoint
	}{
		{"POST", proj + "google/models/gemini-2.5-flash:generateContent", Generate{}, proj + "google/models/gemini-2.5-flash:generateContent"},
		{"POST", "/prefix" + proj + "google/models/gemini-2.5-flash:streamGenerateContent", Generate{}, proj + "google/models/gemini-2.5-flash:generateContent"},
		{"POST", "/v1beta1/projects/p/locations/global/publishers/google/models/m:generateContent", Generate{}, "/v1beta1/projects/p/locations/global/publishers/google/models/m:generateContent"},
		{"POST", "/v1/publishers/google/models/gemini-2.5-flash:generateContent", Generate{}, "/v1/publishers/google/models/gemini-2.5-flash:generateContent"},
		{"POST", proj + "google/models/m:countTokens", CountTokens{}, proj + "google/models/m:countTokens"},
		{"POST", proj + "google/models/gemini-embedding-001:embedContent", Embed{}, proj + "google/models/gemini-embedding-001:embedContent"},
		{"POST", proj + "google/models/text-embedding-005:predict", Predict{}, proj + "google/models/text-embedding-005:predict"},
		{"POST", proj + "anthropic/models/claude-sonnet-4@20250514:rawPredict", RawPredict{}, proj + "anthropic/models/claude-sonnet-4@20250514:rawPredict"},
		{"POST", proj + "anthropic/models/claude-sonnet-4@20250514:streamRawPredict", RawPredict{}, proj + "anthropic/models/claude-sonnet-4@20250514:rawPredict"},
		// not served
		{"GET", proj + "google/models/m:generateContent", Generate{}, ""},
		{"POST", proj + "google/models/m:computeTokens", Generate{}, ""},
		{"POST", proj + "meta/models/m:rawPredict", RawPredict{}, ""},
		{"POST", "/v1/publishers/anthropic/models/m:rawPredict", RawPredict{}, ""},    // Claude has no express mode
		{"POST", proj + "anthropic/models/count-tokens:rawPredict", RawPredict{}, ""}, // Claude's count_tokens
		{"POST", "/v1beta/models/m:generateContent", Generate{}, ""},                  // the Gemini API's
		{"POST", "/v2/projects/p/locations/l/publishers/google/models/m:generateContent", Generate{}, ""},
		{"POST", "/v1/projects//locations/l/publishers/google/models/m:generateContent", Generate{}, ""},
		{"POST", proj + "google/models/a/b:generateContent", Generate{}, ""},
	}
	all := Descriptor.Formats
	for _, c := range cases {
		var got provider.Endpoint
		var by provider.Format
		for _, f := range all {
			if e, ok := f.Route(c.method, c.path); ok {
				if by != nil {
					t.Errorf("%s %s: routed by two formats", c.method, c.path)
				}
				got, by = e, f
			}
		}
		if got != c.want {
			t.Errorf("%s %s: endpoint %q, want %q", c.method, c.path, got, c.want)
			continue
		}
		if c.want != "" && reflect.TypeOf(by) != reflect.TypeOf(c.f) {
			t.Errorf("%s %s: routed by %T, want %T", c.method, c.path, by, c.f)
		}
		// A key endpoint routes to itself (registry.Lookup relies on it).
		if c.want != "" {
			if e, ok := by.Route("POST", string(c.want)); !ok || e != c.want {
				t.Errorf("%s does not route to itself: %q %v", c.want, e, ok)
			}
		}
	}
}

func TestParsePath(t *testing.T) {
	p, ok := ParsePath("/api/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent")
	want := Path{Version: "v1beta1", Project: "my-proj", Location: "europe-west4", Publisher: "google", Model: "gemini-2.5-pro", Method: MethodStream}
	if !ok || p != want {
		t.Fatalf("ParsePath = %+v %v, want %+v", p, ok, want)
	}
	p, ok = ParsePath("/v1/publishers/google/models/gemini-2.5-flash:generateContent")
	if !ok || !p.Express() || p.Location != "" {
		t.Fatalf("express: %+v %v", p, ok)
	}
}

func TestStreams(t *testing.T) {
	const a = "/v1/projects/p/locations/l/publishers/anthropic/models/c:"
	const g = "/v1/projects/p/locations/l/publishers/google/models/m:"
	if !(Generate{}).Streams(g+"streamGenerateContent", nil) || (Generate{}).Streams(g+"generateContent", nil) {
		t.Error("Generate streams by path")
	}
	stream := map[string]any{"stream": true}
	if !(RawPredict{}).Streams(a+"streamRawPredict", stream) || !(RawPredict{}).Streams(a+"streamRawPredict", nil) ||
		(RawPredict{}).Streams(a+"rawPredict", nil) {
		t.Error("RawPredict streams by path or body")
	}
}

// TestBindPath: the model comes from the path; a body naming another is
// refused as contradicting it (record answers 400, forwards nothing).
func TestBindPath(t *testing.T) {
	const path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"
	req := map[string]any{"anthropic_version": "vertex-2023-10-16", "messages": []any{}}
	if err := (RawPredict{}).BindPath(path, req); err != nil || req["model"] != "claude-sonnet-4@20250514" {
		t.Fatalf("bind: %v %v", err, req["model"])
	}
	err := (RawPredict{}).BindPath(path, map[string]any{"model": "claude-opus-4"})
	if !errors.Is(err, provider.ErrContradictsPath) {
		t.Fatalf("contradicting model: %v", err)
	}
	live := (RawPredict{}).LiveBody(map[string]any{"model": "m", "stream": true, "anthropic_version": "v", "max_tokens": 5})
	if !reflect.DeepEqual(live, map[string]any{"anthropic_version": "v", "max_tokens": 5}) {
		t.Fatalf("LiveBody = %v", live)
	}
}

// TestKeyRequestDropsStream: a streamed rawPredict keys as the plain one.
func TestKeyRequestDropsStream(t *testing.T) {
	plain := map[string]any{"model": "c", "anthropic_version": "vertex-2023-10-16", "max_tokens": 5, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	streamed := map[string]any{"stream": true}
	for k, v := range plain {
		streamed[k] = v
	}
	a, b := (RawPredict{}).KeyRequest(plain, nil), (RawPredict{}).KeyRequest(streamed, nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("keys differ: %v / %v", a, b)
	}
}

func TestUpstreamHost(t *testing.T) {
	cases := []struct{ host, path, want string }{
		{"{location}-aiplatform.googleapis.com", "/v1/projects/p/locations/us-central1/publishers/google/models/m:generateContent", "us-central1-aiplatform.googleapis.com"},
		{"{location}-aiplatform.googleapis.com", "/v1/projects/p/locations/global/publishers/google/models/m:generateContent", "aiplatform.googleapis.com"},
		{"{location}-aiplatform.googleapis.com", "/v1/projects/p/locations/eu/publishers/google/models/m:generateContent", "aiplatform.eu.rep.googleapis.com"},
		{"{location}-aiplatform.googleapis.com", "/v1/publishers/google/models/m:generateContent", "aiplatform.googleapis.com"},
		{"{location}.vertex.example", "/v1/projects/p/locations/asia-east1/x", "asia-east1.vertex.example"},
		{"127.0.0.1:9999", "/v1/projects/p/locations/us-central1/x", "127.0.0.1:9999"},
	}
	for _, c := range cases {
		out, err := http.NewRequest("POST", "https://placeholder.invalid"+c.path, bytes.NewReader(nil))
		if err != nil {
			t.Fatal(err)
		}
		out.URL.Host = c.host
		if err := Descriptor.PrepareUpstream(out, nil); err != nil {
			t.Fatal(err)
		}
		if out.URL.Host != c.want {
			t.Errorf("%s %s: host %s, want %s", c.host, c.path, out.URL.Host, c.want)
		}
	}
}

func TestCountTokensAndPredictFields(t *testing.T) {
	f, err := (CountTokens{}).Fields(map[string]any{"totalTokens": provider.Num(7), "promptTokensDetails": []any{}})
	if err != nil || !f.NoText || !f.NoTokens {
		t.Fatalf("countTokens: %+v %v", f, err)
	}
	if _, err := (CountTokens{}).Fields(map[string]any{"totalTokens": "7"}); !errors.Is(err, provider.ErrMalformed) {
		t.Fatalf("countTokens with a string: %v", err)
	}
	f, err = (Predict{}).Fields(map[string]any{"predictions": []any{map[string]any{"embeddings": map[string]any{"values": []any{provider.Num(0)}}}}})
	if err != nil || !f.NoText || !f.NoTokens {
		t.Fatalf("predict: %+v %v", f, err)
	}
	if _, err := (Predict{}).Fields(map[string]any{}); !errors.Is(err, provider.ErrMalformed) {
		t.Fatalf("predict without predictions: %v", err)
	}
	var buf bytes.Buffer
	if err := (Predict{}).SynthesizeStream(nil, false, &buf, func() {}); !errors.Is(err, provider.ErrMalformed) || buf.Len() != 0 {
		t.Fatalf("predict streams: %v", err)
	}
}

// TestWires: the Gemini formats answer in Google's error shape and derive
// Gemini's fields; Claude's in Anthropic's.
func TestWires(t *testing.T) {
	if b := string((Generate{}).ErrorBody("NOT_FOUND", "", "x")); !strings.Contains(b, `"status":"NOT_FOUND"`) {
		t.Errorf("Generate error: %s", b)
	}
	if b := string((RawPredict{}).ErrorBody("not_found_error", "", "x")); !strings.Contains(b, `"type":"error"`) {
		t.Errorf("RawPredict error: %s", b)
	}
	body := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "hi"}}}, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": provider.Num(3), "candidatesTokenCount": provider.Num(1), "totalTokenCount": provider.Num(4)},
		"modelVersion":  "gemini-2.5-flash",
	}
	f, err := (Generate{}).Fields(body)
	if err != nil || f.Content != "hi" || f.TokensUsed != 4 || f.FinishReason != "STOP" {
		t.Fatalf("Generate fields: %+v %v", f, err)
	}
	msg := map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
		"content": []any{map[string]any{"type": "text", "text": "ok"}}, "stop_reason": "end_turn",
		"usage": map[string]any{"input_tokens": provider.Num(5), "output_tokens": provider.Num(2)}}
	f, err = (RawPredict{}).Fields(msg)
	if err != nil || f.Content != "ok" || f.TokensUsed != 7 || f.FinishReason != "end_turn" {
		t.Fatalf("RawPredict fields: %+v %v", f, err)
	}
	// A stream synthesized from the message assembles back into it.
	var buf bytes.Buffer
	if err := (RawPredict{}).SynthesizeStream(msg, false, &buf, func() {}); err != nil {
		t.Fatal(err)
	}
	a := (RawPredict{}).NewAssembler()
	if _, err := a.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	got, err := a.Done()
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := (RawPredict{}).Fields(got); g.Content != "ok" || g.TokensUsed != 7 {
		t.Fatalf("assembled %+v", g)
	}
}

func TestUsage(t *testing.T) {
	u, ok := Descriptor.Usage("", map[string]int64{"promptTokenCount": 3, "candidatesTokenCount": 1, "thoughtsTokenCount": 2, "totalTokenCount": 6})
	if !ok || u.Input != 3 || u.Output != 3 || u.Total != 6 {
		t.Fatalf("gemini usage %+v", u)
	}
	u, ok = Descriptor.Usage("", map[string]int64{"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 1})
	if !ok || u.Input != 5 || u.CacheRead != 1 || u.Total != 8 {
		t.Fatalf("anthropic usage %+v", u)
	}
}

func TestLiveAuth(t *testing.T) {
	h := http.Header{}
	Descriptor.LiveAuth(h, "ya29.token")
	if h.Get("Authorization") != "Bearer ya29.token" {
		t.Fatalf("token: %v", h)
	}
	h = http.Header{}
	Descriptor.LiveAuth(h, "AIzaSyExample")
	if h.Get("x-goog-api-key") != "AIzaSyExample" || h.Get("Authorization") != "" {
		t.Fatalf("key: %v", h)
	}
}
