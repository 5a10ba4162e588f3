package fakeupstream

import (
	"encoding/json"
	"strings"
	"testing"
)

const weatherTools = `"tools":[{"type":"function","function":{"name":"get_weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city"]}}},{"type":"function","function":{"name":"other","parameters":{"type":"object","properties":{}}}}]`

func TestChatPlain(t *testing.T) {
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/v1/chat/completions",
		`{"model":"gpt-4o-mini","temperature":0,"max_tokens":50,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello big world"}]}`, openAIAuth)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content-type %q", ct)
	}
	m := obj(t, b)
	if id := get(t, m, "id").(string); !strings.HasPrefix(id, "chatcmpl-") {
		t.Fatalf("id %q", id)
	}
	for k, want := range map[string]any{"object": "chat.completion", "model": "gpt-4o-mini", "system_fingerprint": "fp_fake"} {
		if got := get(t, m, k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if get(t, m, "created").(float64) < createdBase {
		t.Error("created too small")
	}
	ch := get(t, m, "choices", 0)
	if get(t, ch, "index").(float64) != 0 || get(t, ch, "logprobs") != nil || get(t, ch, "finish_reason") != "stop" {
		t.Errorf("choice %v", ch)
	}
	msg := get(t, ch, "message")
	if get(t, msg, "role") != "assistant" || get(t, msg, "content") != "Echo: Hello big world" || get(t, msg, "refusal") != nil {
		t.Errorf("message %v", msg)
	}
	if has(msg, "tool_calls") {
		t.Error("tool_calls on a text answer")
	}
	u := get(t, m, "usage")
	if get(t, u, "prompt_tokens").(float64) != 5 || get(t, u, "completion_tokens").(float64) != 4 || get(t, u, "total_tokens").(float64) != 9 {
		t.Errorf("usage %v", u)
	}
}

func TestChatContentParts(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"part one"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"two"}]}]}`, openAIAuth)
	if got := get(t, obj(t, b), "choices", 0, "message", "content"); got != "Echo: part one two" {
		t.Fatalf("content %v", got)
	}
}

func TestChatMaxTokensTruncates(t *testing.T) {
	s := start(t, Options{})
	for _, field := range []string{"max_tokens", "max_completion_tokens"} {
		_, b := do(t, s.URL+"/v1/chat/completions",
			`{"model":"m","`+field+`":3,"messages":[{"role":"user","content":"one two three four five"}]}`, openAIAuth)
		m := obj(t, b)
		if got := get(t, m, "choices", 0, "message", "content"); got != "Echo: one two" {
			t.Errorf("%s: content %q", field, got)
		}
		if got := get(t, m, "choices", 0, "finish_reason"); got != "length" {
			t.Errorf("%s: finish %v", field, got)
		}
		if got := get(t, m, "usage", "completion_tokens"); got != 3.0 {
			t.Errorf("%s: completion tokens %v", field, got)
		}
	}
}

func TestChatStream(t *testing.T) {
	s := start(t, Options{})
	const req = `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Tell me a story please"}]}`
	resp, b := do(t, s.URL+"/v1/chat/completions", req, openAIAuth)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := parseSSE(t, b)
	first := obj(t, []byte(evs[0].data))
	d := get(t, first, "choices", 0, "delta")
	if get(t, d, "role") != "assistant" || get(t, d, "content") != "" {
		t.Fatalf("first delta %v", d)
	}
	cs := assembleChat(t, b)
	if !cs.done || cs.role != "assistant" || cs.finish != "stop" {
		t.Fatalf("stream %+v", cs)
	}
	if cs.content != "Echo: Tell me a story please" {
		t.Fatalf("content %q", cs.content)
	}
	if cs.chunks < 5 {
		t.Fatalf("content not split: %d chunks", cs.chunks)
	}
	if len(cs.ids) != 1 {
		t.Fatalf("ids %v", cs.ids)
	}
	if cs.usage == nil || cs.usage["prompt_tokens"] != 5.0 || cs.usage["completion_tokens"] != 6.0 || cs.usage["total_tokens"] != 11.0 {
		t.Fatalf("usage %v", cs.usage)
	}
	if cs.usageNulls != cs.chunks-1 {
		t.Fatalf("usage null on %d of %d chunks", cs.usageNulls, cs.chunks)
	}

	// The same request non-streamed has the same content.
	_, nb := do(t, s.URL+"/v1/chat/completions", strings.Replace(req, `"stream":true,"stream_options":{"include_usage":true},`, "", 1), openAIAuth)
	if got := get(t, obj(t, nb), "choices", 0, "message", "content"); got != cs.content {
		t.Fatalf("non-streamed %q vs streamed %q", got, cs.content)
	}
}

func TestChatStreamWithoutUsage(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth)
	cs := assembleChat(t, b)
	if cs.usage != nil || cs.usageNulls != 0 {
		t.Fatalf("usage present without include_usage: %+v", cs)
	}
	if cs.content != "Echo: hi" || !cs.done {
		t.Fatalf("%+v", cs)
	}
}

func TestChatToolCall(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"What's the weather in Paris?"}],`+weatherTools+`}`, openAIAuth)
	m := obj(t, b)
	ch := get(t, m, "choices", 0)
	if get(t, ch, "finish_reason") != "tool_calls" {
		t.Fatalf("finish %v", ch)
	}
	msg := get(t, ch, "message")
	if get(t, msg, "content") != nil {
		t.Fatalf("content %v", get(t, msg, "content"))
	}
	tcs := get(t, msg, "tool_calls").([]any)
	if len(tcs) != 1 {
		t.Fatalf("%d tool calls", len(tcs))
	}
	tc := tcs[0]
	if id := get(t, tc, "id").(string); !strings.HasPrefix(id, "call_") {
		t.Fatalf("id %q", id)
	}
	if get(t, tc, "type") != "function" || get(t, tc, "function", "name") != "get_weather" {
		t.Fatalf("tool call %v", tc)
	}
	args := get(t, tc, "function", "arguments").(string)
	if args != `{"city":"Paris","days":1,"unit":"celsius"}` {
		t.Fatalf("arguments %s", args)
	}
	if get(t, m, "usage", "completion_tokens").(float64) < 1 {
		t.Fatal("no completion tokens")
	}
}

func TestChatToolCallSimpleSchema(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"Weather in Paris"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`, openAIAuth)
	if got := get(t, obj(t, b), "choices", 0, "message", "tool_calls", 0, "function", "arguments"); got != `{"city":"Paris"}` {
		t.Fatalf("arguments %v", got)
	}
}

func TestChatToolChoice(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","tool_choice":{"type":"function","function":{"name":"other"}},"messages":[{"role":"user","content":"Weather in Paris"}],`+weatherTools+`}`, openAIAuth)
	if got := get(t, obj(t, b), "choices", 0, "message", "tool_calls", 0, "function", "name"); got != "other" {
		t.Fatalf("forced tool %v", got)
	}
	_, b = do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","tool_choice":"none","messages":[{"role":"user","content":"Weather in Paris"}],`+weatherTools+`}`, openAIAuth)
	if got := get(t, obj(t, b), "choices", 0, "message", "content"); got != "Echo: Weather in Paris" {
		t.Fatalf("tool_choice none: %v", got)
	}
}

func TestChatParallelToolCallsStream(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"Compare the weather in both Paris and London"}],`+weatherTools+`}`, openAIAuth)
	cs := assembleChat(t, b)
	if cs.finish != "tool_calls" || cs.content != "" || cs.role != "assistant" {
		t.Fatalf("%+v", cs)
	}
	if len(cs.toolArgs) != 2 || cs.toolNames[0] != "get_weather" || cs.toolNames[1] != "get_weather" {
		t.Fatalf("tool calls %+v", cs)
	}
	if cs.toolIDs[0] == cs.toolIDs[1] || !strings.HasPrefix(cs.toolIDs[0], "call_") {
		t.Fatalf("tool ids %v", cs.toolIDs)
	}
	var a0, a1 map[string]any
	if json.Unmarshal([]byte(cs.toolArgs[0]), &a0) != nil || json.Unmarshal([]byte(cs.toolArgs[1]), &a1) != nil {
		t.Fatalf("arguments not JSON: %v", cs.toolArgs)
	}
	if a0["city"] != "Paris" || a1["city"] != "London" {
		t.Fatalf("arguments %v", cs.toolArgs)
	}
	// Arguments arrive in several pieces after a header with the id and name.
	if strings.Count(string(b), `"tool_calls":[{"index":0,"function":{"arguments":`) < 2 {
		t.Fatalf("arguments not split:\n%s", b)
	}

	// Non-streamed: the same two calls.
	_, nb := do(t, s.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"Compare the weather in both Paris and London"}],`+weatherTools+`}`, openAIAuth)
	tcs := get(t, obj(t, nb), "choices", 0, "message", "tool_calls").([]any)
	if len(tcs) != 2 || get(t, tcs[1], "function", "arguments") != cs.toolArgs[1] {
		t.Fatalf("non-streamed tool calls %v", tcs)
	}
}

func TestChatToolResult(t *testing.T) {
	s := start(t, Options{})
	const msgs = `"messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21}"}]`
	_, b := do(t, s.URL+"/v1/chat/completions", `{"model":"m",`+msgs+`,`+weatherTools+`}`, openAIAuth)
	ch := get(t, obj(t, b), "choices", 0)
	content, _ := get(t, ch, "message", "content").(string)
	if !strings.Contains(content, `{"temp":21}`) || get(t, ch, "finish_reason") != "stop" {
		t.Fatalf("tool result answer %v", ch)
	}
	_, sb := do(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,`+msgs+`,`+weatherTools+`}`, openAIAuth)
	cs := assembleChat(t, sb)
	if cs.content != content || cs.finish != "stop" || len(cs.toolArgs) != 0 {
		t.Fatalf("streamed tool result %+v", cs)
	}
}

func TestCompletions(t *testing.T) {
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/v1/completions", `{"model":"gpt-3.5-turbo-instruct","prompt":"Say this is a test","max_tokens":7}`, openAIAuth)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, b)
	}
	m := obj(t, b)
	if !strings.HasPrefix(get(t, m, "id").(string), "cmpl-") || get(t, m, "object") != "text_completion" {
		t.Fatalf("%v", m)
	}
	ch := get(t, m, "choices", 0)
	if get(t, ch, "text") != "Echo: Say this is a test" || get(t, ch, "finish_reason") != "stop" || get(t, ch, "logprobs") != nil {
		t.Fatalf("choice %v", ch)
	}
	if get(t, m, "usage", "total_tokens").(float64) != 5+6 {
		t.Fatalf("usage %v", m["usage"])
	}

	_, sb := do(t, s.URL+"/v1/completions", `{"model":"m","prompt":"Say this is a test","stream":true,"stream_options":{"include_usage":true}}`, openAIAuth)
	evs := parseSSE(t, sb)
	if evs[len(evs)-1].data != "[DONE]" {
		t.Fatal("no [DONE]")
	}
	text, finish := "", ""
	var usage any
	for _, ev := range evs[:len(evs)-1] {
		c := obj(t, []byte(ev.data))
		if c["object"] != "text_completion" {
			t.Fatalf("object %v", c["object"])
		}
		if u := get(t, c, "usage"); u != nil {
			usage = u
		}
		for _, ch := range get(t, c, "choices").([]any) {
			text += get(t, ch, "text").(string)
			if f, ok := get(t, ch, "finish_reason").(string); ok {
				finish = f
			}
		}
	}
	if text != "Echo: Say this is a test" || finish != "stop" || usage == nil {
		t.Fatalf("text %q finish %q usage %v", text, finish, usage)
	}

	// A bad prompt is a 400.
	resp, b = do(t, s.URL+"/v1/completions", `{"model":"m","prompt":{"x":1}}`, openAIAuth)
	if resp.StatusCode != 400 || get(t, obj(t, b), "error", "type") != "invalid_request_error" {
		t.Fatalf("status %d %s", resp.StatusCode, b)
	}
}

func TestRejectIncludeUsage(t *testing.T) {
	s := start(t, Options{RejectIncludeUsage: true})
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"prompt":"x","messages":[{"role":"user","content":"hi"}]}`
		resp, b := do(t, s.URL+path, body, openAIAuth)
		if resp.StatusCode != 400 {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
		e := get(t, obj(t, b), "error")
		if get(t, e, "type") != "invalid_request_error" || !strings.Contains(get(t, e, "message").(string), "include_usage") {
			t.Fatalf("%s: error %v", path, e)
		}
		resp, b = do(t, s.URL+path, strings.Replace(body, `"stream_options":{"include_usage":true},`, "", 1), openAIAuth)
		if resp.StatusCode != 200 {
			t.Fatalf("%s without the option: status %d %s", path, resp.StatusCode, b)
		}
	}
}
