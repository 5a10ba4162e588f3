package fakeupstream

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const claudeTools = `"tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`

func TestMessagesPlain(t *testing.T) {
	s := start(t, Options{})
	for _, content := range []string{`"Hello there Claude"`, `[{"type":"text","text":"Hello there Claude"}]`} {
		resp, b := do(t, s.URL+"/v1/messages",
			`{"model":"claude-sonnet-4-5","max_tokens":100,"system":"You are terse.","messages":[{"role":"user","content":`+content+`}]}`, anthropicAuth)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d ct %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		m := obj(t, b)
		if !strings.HasPrefix(get(t, m, "id").(string), "msg_") || get(t, m, "type") != "message" || get(t, m, "role") != "assistant" {
			t.Fatalf("%v", m)
		}
		if get(t, m, "model") != "claude-sonnet-4-5" || get(t, m, "stop_reason") != "end_turn" || get(t, m, "stop_sequence") != nil {
			t.Fatalf("%v", m)
		}
		blocks := get(t, m, "content").([]any)
		if len(blocks) != 1 || get(t, blocks[0], "type") != "text" || get(t, blocks[0], "text") != "Echo: Hello there Claude" {
			t.Fatalf("content %v", blocks)
		}
		u := get(t, m, "usage")
		want := map[string]any{"input_tokens": 6.0, "output_tokens": 4.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 0.0}
		if !reflect.DeepEqual(u, want) {
			t.Fatalf("usage %v", u)
		}
	}
}

func TestMessagesMaxTokens(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/messages", `{"model":"c","max_tokens":2,"messages":[{"role":"user","content":"a b c d"}]}`, anthropicAuth)
	m := obj(t, b)
	if get(t, m, "stop_reason") != "max_tokens" || get(t, m, "content", 0, "text") != "Echo: a" {
		t.Fatalf("%v", m)
	}
}

func TestMessagesStream(t *testing.T) {
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/v1/messages",
		`{"model":"claude-x","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Write a short poem"}]}`, anthropicAuth)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d ct %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ms := assembleMessages(t, b)
	wantNames := []string{"message_start", "content_block_start", "ping"}
	if !reflect.DeepEqual(ms.names[:3], wantNames) {
		t.Fatalf("event order %v", ms.names)
	}
	n := len(ms.names)
	if !reflect.DeepEqual(ms.names[n-3:], []string{"content_block_stop", "message_delta", "message_stop"}) {
		t.Fatalf("event order %v", ms.names)
	}
	deltas := 0
	for _, name := range ms.names {
		if name == "content_block_delta" {
			deltas++
		}
	}
	if deltas < 3 {
		t.Fatalf("text not split: %d deltas", deltas)
	}
	if c := ms.message["content"].([]any); len(c) != 0 {
		t.Fatalf("message_start content %v", c)
	}
	if get(t, ms.message, "usage", "output_tokens") != 1.0 || get(t, ms.message, "usage", "input_tokens") != 4.0 {
		t.Fatalf("message_start usage %v", ms.message["usage"])
	}
	if ms.text != "Echo: Write a short poem" || ms.stop != "end_turn" || ms.outTokens != 5 {
		t.Fatalf("%+v", ms)
	}
}

func TestMessagesToolUse(t *testing.T) {
	s := start(t, Options{})
	body := `{"model":"c","max_tokens":100,"messages":[{"role":"user","content":"What's the weather in Paris?"}],` + claudeTools + `}`
	_, b := do(t, s.URL+"/v1/messages", body, anthropicAuth)
	m := obj(t, b)
	if get(t, m, "stop_reason") != "tool_use" {
		t.Fatalf("%v", m)
	}
	blk := get(t, m, "content", 0)
	if get(t, blk, "type") != "tool_use" || get(t, blk, "name") != "get_weather" || !strings.HasPrefix(get(t, blk, "id").(string), "toolu_") {
		t.Fatalf("block %v", blk)
	}
	if !reflect.DeepEqual(get(t, blk, "input"), map[string]any{"city": "Paris"}) {
		t.Fatalf("input %v", get(t, blk, "input"))
	}

	_, sb := do(t, s.URL+"/v1/messages", strings.Replace(body, `"max_tokens":100,`, `"max_tokens":100,"stream":true,`, 1), anthropicAuth)
	ms := assembleMessages(t, sb)
	if ms.stop != "tool_use" || len(ms.toolInputs) != 1 || ms.toolInputs[0] != `{"city":"Paris"}` || ms.toolNames[0] != "get_weather" {
		t.Fatalf("%+v", ms)
	}
	if strings.Count(string(sb), `"input_json_delta"`) < 3 {
		t.Fatalf("input not split:\n%s", sb)
	}

	// "both": two parallel tool_use blocks.
	_, pb := do(t, s.URL+"/v1/messages",
		`{"model":"c","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Weather in both Rome and Oslo"}],`+claudeTools+`}`, anthropicAuth)
	ms = assembleMessages(t, pb)
	if len(ms.toolInputs) != 2 || ms.toolInputs[0] != `{"city":"Rome"}` || ms.toolInputs[1] != `{"city":"Oslo"}` || ms.toolIDs[0] == ms.toolIDs[1] {
		t.Fatalf("parallel %+v", ms)
	}
}

func TestMessagesToolResult(t *testing.T) {
	s := start(t, Options{})
	body := `{"model":"c","max_tokens":100,"messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny, 21C"}]}],` + claudeTools + `}`
	_, b := do(t, s.URL+"/v1/messages", body, anthropicAuth)
	m := obj(t, b)
	text, _ := get(t, m, "content", 0, "text").(string)
	if get(t, m, "stop_reason") != "end_turn" || !strings.Contains(text, "sunny, 21C") {
		t.Fatalf("%v", m)
	}
	// Block-array tool result content, streamed.
	body = strings.Replace(body, `"content":"sunny, 21C"`, `"content":[{"type":"text","text":"sunny, 21C"}]`, 1)
	_, sb := do(t, s.URL+"/v1/messages", strings.Replace(body, `"max_tokens":100,`, `"max_tokens":100,"stream":true,`, 1), anthropicAuth)
	ms := assembleMessages(t, sb)
	if ms.text != text || ms.stop != "end_turn" || len(ms.toolInputs) != 0 {
		t.Fatalf("%+v", ms)
	}
}

func TestMessagesBearerAuthAndErrors(t *testing.T) {
	s := start(t, Options{})
	resp, _ := do(t, s.URL+"/v1/messages", `{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		hdr{"Authorization": "Bearer sk-ant-oat", "anthropic-version": "2026-10-21"})
	if resp.StatusCode != 200 {
		t.Fatalf("bearer auth: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		name, body string
		h          hdr
		status     int
		typ        string
	}{
		{"no key", `{"model":"c","messages":[]}`, hdr{"anthropic-version": "2023-06-01"}, 401, "authentication_error"},
		{"bad json", `{"model":`, anthropicAuth, 400, "invalid_request_error"},
		{"not object", `[1]`, anthropicAuth, 400, "invalid_request_error"},
		{"no model", `{"messages":[]}`, anthropicAuth, 400, "invalid_request_error"},
		{"no messages", `{"model":"c"}`, anthropicAuth, 400, "invalid_request_error"},
		{"wrong type", `{"model":"c","messages":"x"}`, anthropicAuth, 400, "invalid_request_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := do(t, s.URL+"/v1/messages", tc.body, tc.h)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %s", resp.StatusCode, b)
			}
			m := obj(t, b)
			if get(t, m, "type") != "error" || get(t, m, "error", "type") != tc.typ || get(t, m, "error", "message") == "" {
				t.Fatalf("error body %s", b)
			}
			if resp.Header.Get("request-id") == "" {
				t.Fatal("no request-id header")
			}
		})
	}
}

func TestAnthropicSDKPathShape(t *testing.T) {
	// The SDKs send the base URL without /v1 and append /v1/messages; a path
	// prefix is kept.
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/some/prefix/v1/messages", `{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var m anthropicMessage
	if err := json.Unmarshal(b, &m); err != nil || m.Type != "message" {
		t.Fatalf("%v %s", err, b)
	}
	if got := s.LastRequest().Path; got != "/some/prefix/v1/messages" {
		t.Fatalf("captured path %q", got)
	}
}
