package provider_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// vendorPlain is a chat answer as vLLM / DeepSeek send it plain: a
// reasoning_content string and a vendor member that is not a string.
const vendorPlain = `{"id":"chatcmpl-v","object":"chat.completion","created":1767954600,"model":"deepseek-r1",
"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"Paris.",
"reasoning_content":"The user asks for the capital of France. It is Paris.","vendor_meta":{"route":"b","tries":2},"empty_note":""}}],
"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}}`

// vendorStream is the same answer streamed: reasoning first, null
// reasoning_content in the content chunks, the vendor member sent twice
// (the last value wins).
const vendorStream = `data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":"The user asks "},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"reasoning_content":"for the capital of France. ","vendor_meta":{"route":"a"}},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"reasoning_content":"It is Paris.","empty_note":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"content":"Paris.","reasoning_content":null,"vendor_meta":{"route":"b","tries":2}},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}}

data: [DONE]

`

func message(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	return body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
}

// TestUnknownDeltaMembersKept (DESIGN §12.10.2): a stream keeps every
// member its deltas carried — strings concatenated, other values the last
// one — so the streamed and the plain call store the same message; and the
// replay stream synthesized from the plain body carries every member, so
// assembling it gives the plain message back.
func TestUnknownDeltaMembersKept(t *testing.T) {
	plain, err := provider.Decode([]byte(vendorPlain))
	if err != nil {
		t.Fatal(err)
	}
	want := canonical(message(t, plain))
	for _, sizes := range [][]int{nil, {1}, {7, 13}} {
		got, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(vendorStream), sizes...)
		if err != nil {
			t.Fatal(err)
		}
		if c := canonical(message(t, got)); c != want {
			t.Fatalf("chunks %v: streamed message\n%s\nplain message\n%s", sizes, c, want)
		}
	}
	for _, usage := range []bool{false, true} {
		var sse bytes.Buffer
		if err := synthesizeStream(provider.OpenAI, provider.ChatCompletions, plain, usage, &sse, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sse.String(), `"reasoning_content":"The user asks `) || !strings.Contains(sse.String(), `"vendor_meta":{"route":"b","tries":2}`) {
			t.Fatalf("replay stream lacks the members:\n%s", sse.String())
		}
		back, err := assemble(provider.OpenAI, provider.ChatCompletions, sse.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if c := canonical(message(t, back)); c != want {
			t.Fatalf("replayed stream gives\n%s\nwant\n%s", c, want)
		}
	}
}

// TestNullOnlyMemberKeptAsNull: a member only ever sent as null is kept
// as null, and a later string replaces a non-string value.
func TestNullOnlyMemberKeptAsNull(t *testing.T) {
	stream := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi","audio":null,"mixed":{"a":1}},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"mixed":"s1"},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"mixed":"s2"},"finish_reason":"stop"}]}

data: [DONE]

`
	got, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	msg := message(t, got)
	if v, ok := msg["audio"]; !ok || v != nil {
		t.Fatalf("audio = %v (present %v), want null", v, ok)
	}
	if msg["mixed"] != "s1s2" {
		t.Fatalf("mixed = %v", msg["mixed"])
	}
}

// TestInconsistentToolCallDeltasRefused (DESIGN §12.10.3): the SDKs
// disagree on these streams (openai-node keeps the last id and name,
// traceforge kept the first; a gap makes the SDK throw), so each is an
// ErrInconsistent error naming what is wrong, never a guessed message.
func TestInconsistentToolCallDeltasRefused(t *testing.T) {
	ev := func(delta string) string {
		return `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	end := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	open := func(i int, id, name string) string {
		return ev(`{"tool_calls":[{"index":` + string(rune('0'+i)) + `,"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":""}}]}`)
	}
	args := func(i int, a string) string {
		return ev(`{"tool_calls":[{"index":` + string(rune('0'+i)) + `,"function":{"arguments":"` + a + `"}}]}`)
	}
	for _, c := range []struct{ name, stream, want string }{
		{"id changes", open(0, "call_a", "get_weather") + args(0, "{}") + open(0, "call_b", "get_weather") + end, `changes its id from "call_a" to "call_b"`},
		{"name changes", open(0, "call_a", "get_weather") + ev(`{"tool_calls":[{"index":0,"function":{"name":"get_time","arguments":"{}"}}]}`) + end, `changes its name from "get_weather" to "get_time"`},
		{"gap", open(0, "call_a", "f") + args(0, "{}") + open(2, "call_c", "g") + args(2, "{}") + end, "gap"},
		{"never opened", open(0, "call_a", "f") + args(0, "{}") + args(1, "{}") + end, "tool call 1 gets arguments but no delta opened it"},
	} {
		_, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(c.stream))
		if !errors.Is(err, provider.ErrInconsistent) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInconsistent mentioning %q", c.name, err, c.want)
		}
	}
	// The same name repeated on every delta, and out-of-order indexes
	// without a gap, are consistent.
	ok := open(1, "call_b", "g") + open(0, "call_a", "f") + ev(`{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}`) + args(1, "{}") + end
	body, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	calls := message(t, body)["tool_calls"].([]any)
	if len(calls) != 2 || calls[0].(map[string]any)["id"] != "call_a" {
		t.Fatalf("tool calls %v", calls)
	}
}
