package fakeupstream

import (
	"math"
	"strings"
	"testing"
)

const ollamaChat = `{"model":"llama3.2","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Tell me a story please"}],"options":{"temperature":0,"seed":42}}`

const ollamaTools = `"tools":[{"type":"function","function":{"name":"get_weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

func noStream(body string) string { return strings.Replace(body, `{`, `{"stream":false,`, 1) }

func TestOllamaChatStreamMatchesPlain(t *testing.T) {
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/api/chat", ollamaChat, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if !strings.HasPrefix(string(b), `{"model":"llama3.2","created_at":"2026-01-01T00:00:00.123456789Z","message":{"role":"assistant","content":"Echo:"},"done":false}`+"\n") {
		t.Fatalf("first line not in Ollama's member order: %s", b)
	}
	lines := parseNDJSON(t, b)
	var text strings.Builder
	for i, l := range lines {
		last := i == len(lines)-1
		if get(t, l, "done") != last || get(t, l, "model") != "llama3.2" || get(t, l, "message", "role") != "assistant" {
			t.Fatalf("line %d: %v", i, l)
		}
		if has(l, "done_reason") != last || has(l, "eval_count") != last {
			t.Fatalf("line %d: %v", i, l)
		}
		text.WriteString(get(t, l, "message", "content").(string))
	}
	final := lines[len(lines)-1]
	if get(t, final, "done_reason") != "stop" || get(t, final, "prompt_eval_count") != 7.0 || get(t, final, "eval_count") != 6.0 ||
		get(t, final, "total_duration").(float64) <= 0 {
		t.Fatalf("done line %v", final)
	}

	_, pb := do(t, s.URL+"/api/chat", noStream(ollamaChat), nil)
	p := obj(t, pb)
	if get(t, p, "message", "content") != text.String() || text.String() != "Echo: Tell me a story please" || get(t, p, "done") != true {
		t.Fatalf("plain %s, streamed %q", pb, text.String())
	}
	for _, k := range []string{"done_reason", "prompt_eval_count", "eval_count", "created_at"} {
		if p[k] != final[k] {
			t.Errorf("%s: plain %v, streamed %v", k, p[k], final[k])
		}
	}
	// The same request gets the same bytes.
	_, b2 := do(t, s.URL+"/api/chat", ollamaChat, nil)
	if string(b) != string(b2) {
		t.Fatal("same request, different stream")
	}
}

func TestOllamaChatTools(t *testing.T) {
	s := start(t, Options{})
	req := `{"model":"qwen3","messages":[{"role":"user","content":"Weather in Paris?"}],` + ollamaTools + `}`
	_, b := do(t, s.URL+"/api/chat", noStream(req), nil)
	tc := get(t, obj(t, b), "message", "tool_calls", 0)
	if get(t, tc, "function", "name") != "get_weather" || get(t, tc, "function", "arguments", "city") != "Paris" ||
		!strings.HasPrefix(get(t, tc, "id").(string), "call_") {
		t.Fatalf("%s", b)
	}
	_, sb := do(t, s.URL+"/api/chat", req, nil)
	var calls []any
	for _, l := range parseNDJSON(t, sb) {
		if c, ok := get(t, l, "message").(map[string]any)["tool_calls"].([]any); ok {
			calls = append(calls, c...)
		}
	}
	if len(calls) != 1 || get(t, calls[0], "function", "arguments", "city") != "Paris" {
		t.Fatalf("streamed calls %v", calls)
	}
	follow := `{"model":"qwen3","stream":false,"messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":"","tool_calls":[` +
		`{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},{"role":"tool","content":"18C","tool_name":"get_weather"}],` + ollamaTools + `}`
	_, b = do(t, s.URL+"/api/chat", follow, nil)
	if got := get(t, obj(t, b), "message", "content"); got != "The tool returned: 18C" {
		t.Fatalf("after the tool: %v", got)
	}
}

func TestOllamaThinkAndNumPredict(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/api/chat", `{"model":"qwen3","stream":false,"think":true,"options":{"num_predict":2},"messages":[{"role":"user","content":"one two three"}]}`, nil)
	m := obj(t, b)
	if get(t, m, "message", "thinking") != "Thinking about: one two three" || get(t, m, "message", "content") != "Echo: one" ||
		get(t, m, "done_reason") != "length" {
		t.Fatalf("%s", b)
	}
	_, sb := do(t, s.URL+"/api/generate", `{"model":"qwen3","think":"high","prompt":"one two"}`, nil)
	var thinking, response strings.Builder
	for _, l := range parseNDJSON(t, sb) {
		if s, ok := l["thinking"].(string); ok {
			thinking.WriteString(s)
		}
		response.WriteString(get(t, l, "response").(string))
	}
	if thinking.String() != "Thinking about: one two" || response.String() != "Echo: one two" {
		t.Fatalf("thinking %q response %q", thinking.String(), response.String())
	}
}

func TestOllamaGenerate(t *testing.T) {
	s := start(t, Options{})
	const req = `{"model":"llama3.2","system":"Be brief.","prompt":"Why is the sky blue?","options":{"temperature":0,"seed":1}}`
	_, sb := do(t, s.URL+"/api/generate", req, nil)
	lines := parseNDJSON(t, sb)
	var text strings.Builder
	for _, l := range lines {
		text.WriteString(get(t, l, "response").(string))
	}
	final := lines[len(lines)-1]
	if text.String() != "Echo: Why is the sky blue?" || get(t, final, "done") != true || get(t, final, "done_reason") != "stop" ||
		len(get(t, final, "context").([]any)) == 0 || get(t, final, "prompt_eval_count") != 7.0 {
		t.Fatalf("%s", sb)
	}
	_, b := do(t, s.URL+"/api/generate", noStream(req), nil)
	if get(t, obj(t, b), "response") != text.String() {
		t.Fatalf("%s", b)
	}
	// An empty prompt loads the model.
	_, b = do(t, s.URL+"/api/generate", `{"model":"llama3.2"}`, nil)
	if m := obj(t, b); get(t, m, "done_reason") != "load" || get(t, m, "done") != true {
		t.Fatalf("%s", b)
	}
}

func TestOllamaEmbed(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/api/embed", `{"model":"nomic-embed-text","input":["hello world","why"]}`, nil)
	m := obj(t, b)
	e := get(t, m, "embeddings").([]any)
	if len(e) != 2 || get(t, m, "prompt_eval_count") != 3.0 || get(t, m, "model") != "nomic-embed-text" {
		t.Fatalf("%v", m)
	}
	v := floats(t, e[0])
	if len(v) != 768 || math.Abs(norm(v)-1) > 1e-5 {
		t.Fatalf("%d values, norm %v", len(v), norm(v))
	}
	_, b = do(t, s.URL+"/api/embed", `{"model":"nomic-embed-text","input":"hello world","dimensions":32}`, nil)
	if n := len(get(t, obj(t, b), "embeddings", 0).([]any)); n != 32 {
		t.Fatalf("%d values", n)
	}
}

func TestOllamaErrors(t *testing.T) {
	s := start(t, Options{})
	for _, tc := range []struct{ path, body string }{
		{"/api/chat", `{"messages":[]}`},
		{"/api/generate", `{"prompt":"x"}`},
		{"/api/embed", `{"model":"m","input":5}`},
		{"/api/chat", `not json`},
		{"/api/embed", `{"model":"m","input":"x","dimensions":100000}`},
	} {
		resp, b := do(t, s.URL+tc.path, tc.body, nil)
		if resp.StatusCode != 400 {
			t.Fatalf("%s %s: %d", tc.path, tc.body, resp.StatusCode)
		}
		if msg, ok := obj(t, b)["error"].(string); !ok || msg == "" {
			t.Fatalf("%s: error shape %s", tc.path, b)
		}
	}
	s.SetOptions(Options{FailStatus: 500})
	resp, b := do(t, s.URL+"/api/chat", ollamaChat, nil)
	if msg, _ := obj(t, b)["error"].(string); resp.StatusCode != 500 || msg == "" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
