package gemini_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/formattest"
	"github.com/traceforge/traceforge/internal/provider/gemini"
)

var (
	decode  = formattest.Decode
	fixture = formattest.Fixture
	canon   = formattest.Canon
)

func TestRoute(t *testing.T) {
	g, e := gemini.NewGenerate(), gemini.NewEmbed()
	cases := []struct {
		method, path string
		f            provider.Format
		want         provider.Endpoint
	}{
		{"POST", "/v1beta/models/gemini-2.5-flash:generateContent", g, "/v1beta/models/gemini-2.5-flash:generateContent"},
		{"POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", g, "/v1beta/models/gemini-2.5-flash:generateContent"},
		{"POST", "/v1/models/gemini-2.5-flash:generateContent", g, "/v1/models/gemini-2.5-flash:generateContent"},
		{"POST", "/v1alpha/models/m:streamGenerateContent", g, "/v1alpha/models/m:generateContent"},
		{"POST", "/gateway/google/v1beta/models/m:generateContent", g, "/v1beta/models/m:generateContent"},
		{"POST", "/v1beta/models/text-embedding-004:embedContent", e, "/v1beta/models/text-embedding-004:embedContent"},
		{"POST", "/v1beta/models/text-embedding-004:batchEmbedContents", e, "/v1beta/models/text-embedding-004:batchEmbedContents"},
		{"POST", "/v1beta/models/m:embedContent", g, ""},
		{"POST", "/v1beta/models/m:generateContent", e, ""},
		{"GET", "/v1beta/models/m:generateContent", g, ""},
		{"POST", "/v2/models/m:generateContent", g, ""},
		{"POST", "/v1beta/models/:generateContent", g, ""},
		{"POST", "/v1beta/models/a/b:generateContent", g, ""},
		{"POST", "/v1beta/models/m", g, ""},
		{"POST", "/v1beta/models/m:countTokens", g, ""},
		{"POST", "/v1/chat/completions", g, ""},
	}
	for _, tc := range cases {
		got, ok := tc.f.Route(tc.method, tc.path)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%T.Route(%s %s) = %q, %v; want %q", tc.f, tc.method, tc.path, got, ok, tc.want)
		}
	}
}

func TestStreams(t *testing.T) {
	g := gemini.NewGenerate()
	if !g.Streams("/v1beta/models/m:streamGenerateContent", map[string]any{"stream": false}) {
		t.Error(":streamGenerateContent must stream whatever the body says")
	}
	if g.Streams("/v1beta/models/m:generateContent", map[string]any{"stream": true}) {
		t.Error(":generateContent must not stream")
	}
}

func TestBindPath(t *testing.T) {
	g := gemini.NewGenerate()
	const path = "/v1beta/models/gemini-2.5-flash:generateContent"
	req := decode(t, `{"contents":[]}`)
	if err := g.BindPath(path, req); err != nil || req["model"] != "gemini-2.5-flash" {
		t.Fatalf("BindPath = %v, model %v; want the path's model added", err, req["model"])
	}
	for _, ok := range []string{`{"model":"gemini-2.5-flash"}`, `{"model":"models/gemini-2.5-flash"}`} {
		req := decode(t, ok)
		before := canon(t, req)
		if err := g.BindPath(path, req); err != nil || canon(t, req) != before {
			t.Errorf("BindPath(%s) = %v, %s; want accepted unchanged", ok, err, canon(t, req))
		}
	}
	for _, bad := range []string{`{"model":"gemini-pro"}`, `{"model":3}`} {
		err := g.BindPath(path, decode(t, bad))
		if err == nil || !strings.Contains(err.Error(), "gemini-2.5-flash") {
			t.Errorf("BindPath(%s) = %v; want a refusal naming the path's model", bad, err)
		}
	}
}

func TestNormalizeKeyLive(t *testing.T) {
	g := gemini.NewGenerate()
	req := decode(t, `{"model":"m","contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":null,"generationConfig":{"temperature":0,"seed":1,"stopSequences":null}}`)
	g.NormalizeStored(req)
	if _, ok := req["tools"]; ok {
		t.Error("a top-level null must be dropped")
	}
	if gc := req["generationConfig"].(map[string]any); !reflect.DeepEqual(gc["stopSequences"], nil) || len(gc) != 3 {
		t.Error("nested nulls are not top-level and must be kept")
	}
	before := canon(t, req)
	if got := canon(t, g.KeyRequest(req, nil)); got != before {
		t.Errorf("KeyRequest = %s, want the stored request %s", got, before)
	}
	live := g.LiveBody(req)
	if _, ok := live["model"]; ok || live["contents"] == nil {
		t.Errorf("LiveBody = %v; want the request without model", live)
	}
	if canon(t, req) != before {
		t.Error("KeyRequest or LiveBody modified the request")
	}
}

func TestFields(t *testing.T) {
	body := decode(t, string(fixture(t, "generate_tool.json")))
	f, err := gemini.NewGenerate().Fields(body)
	if err != nil {
		t.Fatal(err)
	}
	if f.Content != "Let me check Paris." || f.FinishReason != "STOP" || f.TokensUsed != 33 || f.Model != "gemini-2.5-flash" {
		t.Errorf("Fields = %+v", f)
	}
	if len(f.ToolCalls) != 1 || canon(t, f.ToolCalls[0]) != `{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"},"thoughtSignature":"c2lnbmF0dXJl"}` {
		t.Errorf("ToolCalls = %v; want the whole functionCall part", f.ToolCalls)
	}
	if f.Usage["promptTokenCount"] == nil {
		t.Errorf("Usage = %v; want usageMetadata verbatim", f.Usage)
	}
	f.Usage["promptTokenCount"] = "changed"
	f.ToolCalls[0].(map[string]any)["thoughtSignature"] = "changed"
	if strings.Contains(canon(t, body), "changed") {
		t.Error("Fields aliases the body")
	}
}

func TestFieldsErrors(t *testing.T) {
	cases := []struct {
		name, body string
		want       error
		mention    string
	}{
		{"no usage", `{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}]}`, provider.ErrNoUsage, "totalTokenCount"},
		{"no total", `{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3}}`, provider.ErrNoUsage, "totalTokenCount"},
		{"blocked", `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"totalTokenCount":3}}`, provider.ErrMalformed, "SAFETY"},
		{"no finish", `{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"totalTokenCount":3}}`, provider.ErrMalformed, "finishReason"},
		{"bad text", `{"candidates":[{"content":{"parts":[{"text":1}]},"finishReason":"STOP"}],"usageMetadata":{"totalTokenCount":3}}`, provider.ErrMalformed, "/candidates/0/content/parts/0/text"},
		{"bad model", `{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"totalTokenCount":3},"modelVersion":1}`, provider.ErrMalformed, "modelVersion"},
	}
	for _, tc := range cases {
		_, err := gemini.NewGenerate().Fields(decode(t, tc.body))
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: err = %v; want %v mentioning %q", tc.name, err, tc.want, tc.mention)
		}
	}
	// A candidate stopped for safety has no content: "" with its reason.
	f, err := gemini.NewGenerate().Fields(decode(t, `{"candidates":[{"finishReason":"SAFETY"}],"usageMetadata":{"totalTokenCount":3}}`))
	if err != nil || f.Content != "" || f.FinishReason != "SAFETY" {
		t.Errorf("safety stop: %+v, %v", f, err)
	}
}

func assemble(t testing.TB, stream []byte, chunk int) (map[string]any, error) {
	t.Helper()
	return formattest.Assemble(gemini.NewGenerate(), stream, chunk)
}

func TestAssembler(t *testing.T) {
	plain := decode(t, string(fixture(t, "generate_tool.json")))
	for _, chunk := range []int{1, 7, 1 << 20} {
		body, err := assemble(t, fixture(t, "generate_tool.sse"), chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		// DESIGN §12.9 item 1: the last chunk, parts = every chunk's parts
		// in order, not merged — the same body the call gives unstreamed.
		if got, want := canon(t, body), canon(t, plain); got != want {
			t.Errorf("chunk %d: assembled\n%s\nwant\n%s", chunk, got, want)
		}
	}
}

func TestAssemblerBroken(t *testing.T) {
	full := fixture(t, "generate_tool.sse")
	events := bytes.SplitAfter(full, []byte("\r\n\r\n"))
	cases := []struct {
		name   string
		stream []byte
		want   error
	}{
		{"empty", nil, provider.ErrBrokenStream},
		{"no finishReason", bytes.Join(events[:2], nil), provider.ErrBrokenStream},
		{"last event unterminated", full[:len(full)-4], provider.ErrBrokenStream},
		{"error event", append(bytes.Join(events[:1], nil), []byte("data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded.\", \"status\": \"UNAVAILABLE\"}}\r\n\r\n")...), provider.ErrStreamError},
		{"not JSON", []byte("data: {nope\n\n"), provider.ErrMalformed},
		{"not an object", []byte("data: [1]\n\n"), provider.ErrMalformed},
	}
	for _, tc := range cases {
		_, err := assemble(t, tc.stream, 5)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v; want %v", tc.name, err, tc.want)
		}
	}
	if _, err := assemble(t, cases[3].stream, 5); !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("error event: %v; want the provider's message", err)
	}
}

func TestSynthesizeStreamRoundTrip(t *testing.T) {
	bodies := []string{
		string(fixture(t, "generate_tool.json")),
		`{"candidates":[{"content":{"parts":[{"text":"one part"}],"role":"model"},"finishReason":"STOP","index":0,"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE"}]}],"usageMetadata":{"totalTokenCount":4},"modelVersion":"m","responseId":"r","extra":{"kept":true}}`,
		`{"candidates":[{"content":{"parts":[],"role":"model"},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"totalTokenCount":4}}`,
	}
	for _, s := range bodies {
		body := decode(t, s)
		var out bytes.Buffer
		flushes := 0
		if err := gemini.NewGenerate().SynthesizeStream(body, false, &out, func() { flushes++ }); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "data: "); n != flushes {
			t.Errorf("%d events, %d flushes; want one flush per event", n, flushes)
		}
		got, err := assemble(t, out.Bytes(), 3)
		if err != nil {
			t.Fatalf("assembling the synthesized stream: %v\n%s", err, out.String())
		}
		if canon(t, got) != canon(t, body) {
			t.Errorf("round trip:\n%s\nwant\n%s", canon(t, got), canon(t, body))
		}
		var again bytes.Buffer
		_ = gemini.NewGenerate().SynthesizeStream(body, false, &again, nil)
		if again.String() != out.String() {
			t.Error("SynthesizeStream is not deterministic")
		}
	}
	// One event per part, in order, each a GenerateContentResponse.
	var out bytes.Buffer
	_ = gemini.NewGenerate().SynthesizeStream(decode(t, string(fixture(t, "generate_tool.json"))), false, &out, nil)
	if n := strings.Count(out.String(), "data: "); n != 4 {
		t.Errorf("%d events for 4 parts:\n%s", n, out.String())
	}
	if err := gemini.NewGenerate().SynthesizeStream(decode(t, `{"promptFeedback":{}}`), false, &out, nil); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("a body without candidates: %v; want ErrMalformed", err)
	}
}

func TestErrorShape(t *testing.T) {
	g := gemini.NewGenerate()
	typ, _ := g.MissError()
	got := string(g.ErrorBody(typ, "", "no snapshot"))
	if got != `{"error":{"code":404,"message":"no snapshot","status":"NOT_FOUND"}}` {
		t.Errorf("miss body = %s", got)
	}
	for status, want := range map[int]string{400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 413: "INVALID_ARGUMENT", 502: "UNAVAILABLE", 500: "INTERNAL"} {
		if got := g.ErrorType(status); got != want {
			t.Errorf("ErrorType(%d) = %s, want %s", status, got, want)
		}
	}
	if got := string(g.ErrorBody("UNAVAILABLE", "", "x")); !strings.Contains(got, `"code":503`) {
		t.Errorf("UNAVAILABLE body = %s", got)
	}
}

func TestEmbedFields(t *testing.T) {
	e := gemini.NewEmbed()
	f, err := e.Fields(decode(t, `{"embedding":{"values":[0.1,-0.2]}}`))
	if err != nil || !f.NoText || !f.NoTokens || f.Usage != nil || f.Content != "" || f.FinishReason != "" {
		t.Errorf("embedContent: %+v, %v; want an embedding with no tokens_used, no content, no finish reason", f, err)
	}
	f, err = e.Fields(decode(t, `{"embeddings":[{"values":[0.1]},{"values":[0.2]}],"usageMetadata":{"totalTokenCount":7}}`))
	if err != nil || f.TokensUsed != 7 || f.NoTokens || !f.NoText {
		t.Errorf("batch with usage: %+v, %v", f, err)
	}
	for _, bad := range []string{`{}`, `{"embedding":{"values":"x"}}`, `{"embeddings":[1]}`, `{"embeddings":{}}`} {
		if _, err := e.Fields(decode(t, bad)); !errors.Is(err, provider.ErrMalformed) {
			t.Errorf("Fields(%s) = %v; want ErrMalformed", bad, err)
		}
	}
	if e.Streams("/v1beta/models/m:embedContent", nil) {
		t.Error("embeddings never stream")
	}
	if !e.OwnsRecord(decode(t, `{"requests":[]}`)) || !e.OwnsRecord(decode(t, `{"content":{}}`)) || e.OwnsRecord(decode(t, `{"contents":[]}`)) {
		t.Error("OwnsRecord: content/requests are embeddings, contents is not")
	}
	if err := e.SynthesizeStream(nil, false, &bytes.Buffer{}, nil); err == nil {
		t.Error("embeddings have no stream to synthesize")
	}
}
