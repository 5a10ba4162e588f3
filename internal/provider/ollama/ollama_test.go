package ollama_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/formattest"
	"github.com/traceforge/traceforge/internal/provider/ollama"
)

var (
	decode  = formattest.Decode
	fixture = formattest.Fixture
	canon   = formattest.Canon
)

func assemble(t testing.TB, f provider.Format, stream []byte, chunk int) (map[string]any, error) {
	t.Helper()
	return formattest.Assemble(f, stream, chunk)
}

func TestRouteAndStreams(t *testing.T) {
	chat, gen, emb := ollama.NewChat(), ollama.NewGenerate(), ollama.NewEmbed()
	cases := []struct {
		f            provider.Format
		method, path string
		want         provider.Endpoint
	}{
		{chat, "POST", "/api/chat", "/api/chat"},
		{chat, "POST", "/ollama/api/chat", "/api/chat"},
		{gen, "POST", "/api/generate", "/api/generate"},
		{emb, "POST", "/api/embed", "/api/embed"},
		{emb, "POST", "/api/embeddings", ""},
		{chat, "GET", "/api/chat", ""},
		{chat, "POST", "/api/generate", ""},
		{gen, "POST", "/api/tags", ""},
	}
	for _, tc := range cases {
		got, ok := tc.f.Route(tc.method, tc.path)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%T.Route(%s %s) = %q, %v; want %q", tc.f, tc.method, tc.path, got, ok, tc.want)
		}
	}
	for body, want := range map[string]bool{`{}`: true, `{"stream":true}`: true, `{"stream":false}`: false, `{"stream":"no"}`: true} {
		if got := chat.Streams("/api/chat", decode(t, body)); got != want {
			t.Errorf("Streams(%s) = %v, want %v (Ollama streams unless \"stream\": false)", body, got, want)
		}
	}
	if emb.Streams("/api/embed", decode(t, `{}`)) {
		t.Error("embed never streams")
	}
}

func TestKeyAndLive(t *testing.T) {
	chat := ollama.NewChat()
	req := decode(t, `{"model":"m","stream":true,"format":null,"options":{"temperature":0,"seed":7},"messages":[
	  {"role":"user","content":"hi"},
	  {"role":"assistant","content":"","tool_calls":[{"id":"call_x9","function":{"name":"f","arguments":{}}}]},
	  {"role":"tool","tool_call_id":"call_x9","content":"1"}]}`)
	chat.NormalizeStored(req)
	if _, ok := req["format"]; ok {
		t.Error("top-level null must be dropped")
	}
	before := canon(t, req)
	key := chat.KeyRequest(req, nil)
	got := canon(t, key)
	if strings.Contains(got, "stream") || strings.Contains(got, "call_x9") || !strings.Contains(got, `"tool_call_id":"call_1"`) || !strings.Contains(got, `"id":"call_1"`) {
		t.Errorf("KeyRequest = %s; want no stream and tool-call ids renumbered", got)
	}
	live := chat.LiveBody(req)
	if live["stream"] != false {
		t.Errorf("LiveBody stream = %v; want false (Ollama streams unless told)", live["stream"])
	}
	if canon(t, req) != before {
		t.Error("KeyRequest or LiveBody modified the request")
	}
}

func TestChatFields(t *testing.T) {
	f, err := ollama.NewChat().Fields(decode(t, string(fixture(t, "chat_tool.json"))))
	if err != nil {
		t.Fatal(err)
	}
	if f.Content != "Checking Paris." || f.FinishReason != "stop" || f.TokensUsed != 21 || f.Model != "qwen3:0.6b" || f.Usage != nil {
		t.Errorf("Fields = %+v", f)
	}
	if len(f.ToolCalls) != 1 || !strings.Contains(canon(t, f.ToolCalls[0]), "get_weather") {
		t.Errorf("ToolCalls = %v", f.ToolCalls)
	}
	// A missing counter counts 0 (DESIGN §12.9 item 2).
	f, err = ollama.NewChat().Fields(decode(t, `{"model":"m","message":{"role":"assistant","content":"x"},"done":true,"done_reason":"length","eval_count":3}`))
	if err != nil || f.TokensUsed != 3 || f.FinishReason != "length" {
		t.Errorf("Fields without prompt_eval_count = %+v, %v", f, err)
	}
	for _, bad := range []string{
		`{"message":{"content":"x"},"done":false,"done_reason":"stop"}`,
		`{"message":{"content":"x"},"done":true}`,
		`{"message":"x","done":true,"done_reason":"stop"}`,
		`{"message":{"content":1},"done":true,"done_reason":"stop"}`,
		`{"message":{"content":"x"},"done":true,"done_reason":"stop","eval_count":-1}`,
	} {
		if _, err := ollama.NewChat().Fields(decode(t, bad)); !errors.Is(err, provider.ErrMalformed) {
			t.Errorf("Fields(%s) = %v; want ErrMalformed", bad, err)
		}
	}
}

func TestGenerateAndEmbedFields(t *testing.T) {
	f, err := ollama.NewGenerate().Fields(decode(t, string(fixture(t, "generate.json"))))
	if err != nil || f.Content != "The sky is blue." || f.TokensUsed != 9 || f.FinishReason != "stop" {
		t.Errorf("generate Fields = %+v, %v", f, err)
	}
	f, err = ollama.NewEmbed().Fields(decode(t, `{"model":"all-minilm","embeddings":[[0.1,0.2],[0.3]],"total_duration":1,"prompt_eval_count":6}`))
	if err != nil || f.TokensUsed != 6 || f.NoTokens || !f.NoText || f.Content != "" || f.FinishReason != "" || f.Model != "all-minilm" {
		t.Errorf("embed Fields = %+v, %v", f, err)
	}
	for _, bad := range []string{`{}`, `{"embeddings":[1]}`} {
		if _, err := ollama.NewEmbed().Fields(decode(t, bad)); !errors.Is(err, provider.ErrMalformed) {
			t.Errorf("embed Fields(%s) = %v; want ErrMalformed", bad, err)
		}
	}
}

func TestAssembler(t *testing.T) {
	cases := []struct {
		f             provider.Format
		stream, plain string
	}{
		{ollama.NewChat(), "chat_tool.ndjson", "chat_tool.json"},
		{ollama.NewGenerate(), "generate.ndjson", "generate.json"},
	}
	for _, tc := range cases {
		want := canon(t, decode(t, string(fixture(t, tc.plain))))
		for _, chunk := range []int{1, 13, 1 << 20} {
			body, err := assemble(t, tc.f, fixture(t, tc.stream), chunk)
			if err != nil {
				t.Fatalf("%s chunk %d: %v", tc.stream, chunk, err)
			}
			if got := canon(t, body); got != want {
				t.Errorf("%s chunk %d: assembled\n%s\nwant the unstreamed answer\n%s", tc.stream, chunk, got, want)
			}
		}
	}
	// A last line without its newline is complete: JSON ends by itself.
	s := bytes.TrimSuffix(fixture(t, "generate.ndjson"), []byte("\n"))
	if _, err := assemble(t, ollama.NewGenerate(), s, 4); err != nil {
		t.Errorf("unterminated done line: %v", err)
	}
}

func TestAssemblerBroken(t *testing.T) {
	full := fixture(t, "chat_tool.ndjson")
	lines := bytes.SplitAfter(full, []byte("\n"))
	cases := []struct {
		name   string
		stream []byte
		want   error
	}{
		{"empty", nil, provider.ErrBrokenStream},
		{"no done line", bytes.Join(lines[:4], nil), provider.ErrBrokenStream},
		{"cut in the done line", full[:len(full)-20], provider.ErrBrokenStream},
		{"error line", append(bytes.Join(lines[:2], nil), []byte("{\"error\":\"model runner has unexpectedly stopped\"}\n")...), provider.ErrStreamError},
		{"not JSON", []byte("{nope\n"), provider.ErrMalformed},
		{"message not an object", []byte(`{"message":"x","done":true}` + "\n"), provider.ErrMalformed},
	}
	for _, tc := range cases {
		_, err := assemble(t, ollama.NewChat(), tc.stream, 7)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v; want %v", tc.name, err, tc.want)
		}
	}
	if _, err := assemble(t, ollama.NewChat(), cases[3].stream, 7); !strings.Contains(err.Error(), "unexpectedly stopped") {
		t.Errorf("error line: %v; want Ollama's message", err)
	}
}

func TestSynthesizeStreamRoundTrip(t *testing.T) {
	cases := []struct {
		f    provider.Format
		body string
	}{
		{ollama.NewChat(), string(fixture(t, "chat_tool.json"))},
		{ollama.NewGenerate(), string(fixture(t, "generate.json"))},
		{ollama.NewChat(), `{"model":"m","created_at":"t","message":{"role":"assistant","content":"","thinking":"","tool_calls":[]},"done":true,"done_reason":"stop"}`},
		{ollama.NewGenerate(), `{"model":"m","response":"` + strings.Repeat("word ", 40) + `","thinking":"hmm","done":true,"done_reason":"length","eval_count":1}`},
	}
	for _, tc := range cases {
		body := decode(t, tc.body)
		var out bytes.Buffer
		flushes := 0
		if err := tc.f.SynthesizeStream(body, false, &out, func() { flushes++ }); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "\n"); n != flushes || n < 1 {
			t.Errorf("%d lines, %d flushes; want one flush per line", n, flushes)
		}
		got, err := assemble(t, tc.f, out.Bytes(), 5)
		if err != nil {
			t.Fatalf("assembling the synthesized stream: %v\n%s", err, out.String())
		}
		if canon(t, got) != canon(t, body) {
			t.Errorf("round trip:\n%s\nwant\n%s\nstream:\n%s", canon(t, got), canon(t, body), out.String())
		}
		last := out.String()[strings.LastIndex(strings.TrimSuffix(out.String(), "\n"), "\n")+1:]
		if !strings.HasPrefix(last, `{"model":`) || !strings.Contains(last, `"done":true,"done_reason"`) {
			t.Errorf("done line not in Ollama's member order: %s", last)
		}
	}
	if err := ollama.NewChat().SynthesizeStream(decode(t, `{"message":"x"}`), false, &bytes.Buffer{}, nil); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("bad body: %v; want ErrMalformed", err)
	}
	if ct := ollama.NewChat().StreamContentType(); ct != "application/x-ndjson" {
		t.Errorf("StreamContentType = %s", ct)
	}
}

func TestErrorShape(t *testing.T) {
	typ, code := ollama.NewChat().MissError()
	if got := string(ollama.NewChat().ErrorBody(typ, code, "no snapshot")); got != `{"error":"no snapshot"}` {
		t.Errorf("ErrorBody = %s; want Ollama's {\"error\": message}", got)
	}
}
