package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestDecode(t *testing.T) {
	m, err := provider.Decode([]byte(`{"n": 9007199254740992, "f": 1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if m["n"] != json.Number("9007199254740992") || m["f"] != json.Number("1.50") {
		t.Fatalf("numbers not kept: %#v", m)
	}
	// The same strict rules as snapshot files: what cannot be hashed exactly
	// is refused up front.
	for _, bad := range []string{`{} {}`, `[1]`, `{`, ``, `"x"`, `{"n": 12345678901234567890}`, `{"a":1,"a":2}`} {
		if _, err := provider.Decode([]byte(bad)); !errors.Is(err, provider.ErrMalformed) {
			t.Errorf("Decode(%q) err = %v", bad, err)
		}
	}
}

func TestExtract(t *testing.T) {
	cases := []struct {
		name string
		p    provider.Name
		e    provider.Endpoint
		body string
		want snapshot.Fields
		err  error
	}{
		{"chat", provider.OpenAI, provider.ChatCompletions,
			`{"model":"gpt-4o","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			snapshot.Fields{Content: "hi", TokensUsed: 4, FinishReason: "stop", Model: "gpt-4o"}, nil},
		{"chat null content with tools", provider.OpenAI, provider.ChatCompletions,
			`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"total_tokens":9}}`,
			snapshot.Fields{TokensUsed: 9, FinishReason: "tool_calls", ToolCalls: []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "f", "arguments": "{}"}}}}, nil},
		{"chat empty tool_calls is none", provider.OpenAI, provider.ChatCompletions,
			`{"choices":[{"message":{"content":"x","tool_calls":[]},"finish_reason":"stop"}],"usage":{"total_tokens":1}}`,
			snapshot.Fields{Content: "x", TokensUsed: 1, FinishReason: "stop"}, nil},
		{"chat second choice ignored", provider.OpenAI, provider.ChatCompletions,
			`{"choices":[{"message":{"content":"a"},"finish_reason":"stop"},{"message":{"content":"b"},"finish_reason":"length"}],"usage":{"total_tokens":1}}`,
			snapshot.Fields{Content: "a", TokensUsed: 1, FinishReason: "stop"}, nil},
		{"completions", provider.OpenAI, provider.Completions,
			`{"model":"i","choices":[{"text":"x y","finish_reason":"length"}],"usage":{"total_tokens":7}}`,
			snapshot.Fields{Content: "x y", TokensUsed: 7, FinishReason: "length", Model: "i"}, nil},
		{"anthropic sums usage", provider.Anthropic, provider.Messages,
			`{"model":"c","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"},{"type":"tool_use","id":"t1","name":"n","input":{}},{"type":"text","text":"b"}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":2,"cache_read_input_tokens":null}}`,
			snapshot.Fields{Content: "ab", TokensUsed: 17, FinishReason: "tool_use", Model: "c", ToolCalls: []any{map[string]any{"type": "tool_use", "id": "t1", "name": "n", "input": map[string]any{}}}}, nil},
		{"no usage", provider.OpenAI, provider.ChatCompletions, `{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}`, snapshot.Fields{}, provider.ErrNoUsage},
		{"null usage", provider.Anthropic, provider.Messages, `{"content":[],"stop_reason":"end_turn","usage":null}`, snapshot.Fields{}, provider.ErrNoUsage},
		{"no finish reason", provider.OpenAI, provider.ChatCompletions, `{"choices":[{"message":{"content":"x"},"finish_reason":null}],"usage":{"total_tokens":1}}`, snapshot.Fields{}, provider.ErrMalformed},
		{"no stop reason", provider.Anthropic, provider.Messages, `{"content":[],"usage":{"input_tokens":1}}`, snapshot.Fields{}, provider.ErrMalformed},
		{"no choices", provider.OpenAI, provider.ChatCompletions, `{"choices":[],"usage":{"total_tokens":1}}`, snapshot.Fields{}, provider.ErrMalformed},
		{"content object", provider.OpenAI, provider.ChatCompletions, `{"choices":[{"message":{"content":{}},"finish_reason":"stop"}],"usage":{"total_tokens":1}}`, snapshot.Fields{}, provider.ErrMalformed},
		{"fractional tokens", provider.OpenAI, provider.ChatCompletions, `{"choices":[{"message":{"content":""},"finish_reason":"stop"}],"usage":{"total_tokens":1.5}}`, snapshot.Fields{}, provider.ErrMalformed},
		{"negative tokens", provider.Anthropic, provider.Messages, `{"content":[],"stop_reason":"end_turn","usage":{"input_tokens":-1}}`, snapshot.Fields{}, provider.ErrMalformed},
		{"model not string", provider.OpenAI, provider.ChatCompletions, `{"model":1,"choices":[{"message":{"content":""},"finish_reason":"stop"}],"usage":{"total_tokens":1}}`, snapshot.Fields{}, provider.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, err := provider.Decode([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := extract(c.p, c.e, body)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Usage == nil {
				t.Fatal("usage not returned")
			}
			got.Usage = nil
			if canonical(got.ToolCalls) != canonical(c.want.ToolCalls) {
				t.Fatalf("tool calls %s, want %s", canonical(got.ToolCalls), canonical(c.want.ToolCalls))
			}
			got.ToolCalls, c.want.ToolCalls = nil, nil
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := extract(provider.OpenAI, provider.ChatCompletions, nil); !errors.Is(err, provider.ErrMalformed) {
		t.Fatalf("nil body: %v", err)
	}
}

func TestExtractDoesNotAlias(t *testing.T) {
	body := loadBody(t, "openai_chat_tools")
	f := mustExtract(t, provider.OpenAI, provider.ChatCompletions, body)
	f.Usage["total_tokens"] = provider.Num(0)
	f.ToolCalls[0].(map[string]any)["id"] = "changed"
	again := mustExtract(t, provider.OpenAI, provider.ChatCompletions, body)
	if again.TokensUsed != 133 || again.ToolCalls[0].(map[string]any)["id"] == "changed" {
		t.Fatal("Extract result aliases the body")
	}
}

func openaiCall(id, name, args string) any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

func anthropicCall(id, name, input string) any {
	v, err := provider.DecodeValue([]byte(input))
	if err != nil {
		panic(err)
	}
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": v}
}

func TestEqualAndDiff(t *testing.T) {
	base := snapshot.Fields{Content: "hello", TokensUsed: 10, FinishReason: "stop", Model: "m",
		ToolCalls: []any{openaiCall("call_1", "f", `{"a":1}`)},
		Usage:     map[string]any{"total_tokens": provider.Num(10), "prompt_tokens": provider.Num(4)}}
	same := base
	same.ToolCalls = []any{openaiCall("call_OTHER", "f", `{"a":1}`)}
	same.Usage = map[string]any{"total_tokens": provider.Num(10), "prompt_tokens": provider.Num(6)}
	if !provider.Equal(base, same) || len(provider.Diff(base, same)) != 0 {
		t.Fatalf("ids and usage breakdown must not count: %v", provider.Diff(base, same))
	}
	cases := []struct {
		change func(*snapshot.Fields)
		want   string
	}{
		{func(f *snapshot.Fields) { f.Content = "hullo" }, `content: "hello" → "hullo"`},
		{func(f *snapshot.Fields) { f.FinishReason = "length" }, `finish_reason: "stop" → "length"`},
		{func(f *snapshot.Fields) { f.TokensUsed = 12 }, `tokens_used: 10 → 12`},
		{func(f *snapshot.Fields) { f.Model = "m2" }, `model: "m" → "m2"`},
		{func(f *snapshot.Fields) { f.ToolCalls = []any{openaiCall("call_1", "f", `{"a": 1}`)} }, `tool_calls[0]: f({"a":1}) → f({"a": 1})`},
		{func(f *snapshot.Fields) { f.ToolCalls = []any{openaiCall("call_1", "g", `{"a":1}`)} }, `tool_calls[0]: f({"a":1}) → g({"a":1})`},
		{func(f *snapshot.Fields) { f.ToolCalls = nil }, `tool_calls: 1 → 0 calls (f → none)`},
	}
	for _, c := range cases {
		b := base
		c.change(&b)
		d := provider.Diff(base, b)
		if provider.Equal(base, b) || len(d) != 1 || d[0] != c.want {
			t.Errorf("Diff = %q, want [%q]", d, c.want)
		}
	}
	// Anthropic inputs compare as canonical JSON: key order and number
	// spelling do not matter, values do.
	a := snapshot.Fields{FinishReason: "tool_use", ToolCalls: []any{anthropicCall("toolu_1", "w", `{"x":1.0,"y":{"b":[1,2],"a":"s"}}`)}}
	b := snapshot.Fields{FinishReason: "tool_use", ToolCalls: []any{anthropicCall("toolu_2", "w", `{"y":{"a":"s","b":[1,2]},"x":1}`)}}
	if !provider.Equal(a, b) {
		t.Fatalf("canonical inputs differ: %v", provider.Diff(a, b))
	}
	c := snapshot.Fields{FinishReason: "tool_use", ToolCalls: []any{anthropicCall("toolu_1", "w", `{"x":2,"y":{"a":"s","b":[1,2]}}`)}}
	if provider.Equal(a, c) {
		t.Fatal("different inputs compared equal")
	}
	// Gemini functionCall parts compare by name and canonical args;
	// thoughtSignature and id are ignored (DESIGN §12.9 item 7).
	part := func(sig, args string) any {
		v, err := provider.DecodeValue([]byte(`{"functionCall":{"id":"` + sig + `","name":"w","args":` + args + `},"thoughtSignature":"` + sig + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	g1 := snapshot.Fields{FinishReason: "STOP", ToolCalls: []any{part("AAA", `{"x":1.0,"y":"s"}`)}}
	g2 := snapshot.Fields{FinishReason: "STOP", ToolCalls: []any{part("BBB", `{"y":"s","x":1}`)}}
	if !provider.Equal(g1, g2) {
		t.Fatalf("Gemini parts differing only in thoughtSignature: %v", provider.Diff(g1, g2))
	}
	if d := provider.Diff(g1, snapshot.Fields{FinishReason: "STOP", ToolCalls: []any{part("AAA", `{"x":2,"y":"s"}`)}}); len(d) != 1 || !strings.Contains(d[0], `w({"x":1,"y":"s"}) → w({"x":2,"y":"s"})`) {
		t.Fatalf("Gemini args change: %q", d)
	}
	// Long content: the diff shows where it changes.
	long1 := strings.Repeat("word ", 40) + "end"
	long2 := strings.Repeat("word ", 40) + "END"
	d := provider.Diff(snapshot.Fields{Content: long1}, snapshot.Fields{Content: long2})
	if len(d) != 1 || !strings.Contains(d[0], "differs at character 201") || len(d[0]) > 300 {
		t.Fatalf("long diff: %q", d)
	}
}

func TestNotes(t *testing.T) {
	a := loadBody(t, "openai_chat_text")
	b := provider.DeepCopy(a).(map[string]any)
	b["id"] = "chatcmpl-other"
	b["created"] = provider.Num(1)
	b["system_fingerprint"] = "fp_new"
	b["usage"].(map[string]any)["prompt_tokens"] = provider.Num(30)
	b["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = "changed"
	notes := provider.Notes(a, b)
	want := []string{
		`body/system_fingerprint: "fp_560af6e559" → "fp_new" (the provider's backend configuration changed)`,
		`body/usage/prompt_tokens: 24 → 30`,
	}
	if !reflect.DeepEqual(notes, want) {
		t.Fatalf("Notes = %q\nwant %q", notes, want)
	}
	if n := provider.Notes(a, provider.DeepCopy(a).(map[string]any)); len(n) != 0 {
		t.Fatalf("identical bodies: %q", n)
	}
	if n := provider.Notes(nil, a); len(n) != 1 || !strings.Contains(n[0], "synthesized") {
		t.Fatalf("nil body: %q", n)
	}
	if provider.Notes(nil, nil) != nil {
		t.Fatal("two nil bodies")
	}
	// Anthropic: thinking is a note, tool ids are not.
	x := loadBody(t, "anthropic_thinking")
	y := provider.DeepCopy(x).(map[string]any)
	y["content"].([]any)[0].(map[string]any)["thinking"] = "other thoughts"
	y["id"] = "msg_other"
	if n := provider.Notes(x, y); len(n) != 1 || !strings.HasPrefix(n[0], "body/content/0/thinking: ") {
		t.Fatalf("thinking note: %q", n)
	}
	tu := loadBody(t, "anthropic_tool_use")
	tu2 := provider.DeepCopy(tu).(map[string]any)
	tu2["content"].([]any)[1].(map[string]any)["id"] = "toolu_other"
	if n := provider.Notes(tu, tu2); len(n) != 0 {
		t.Fatalf("tool id note: %q", n)
	}
	// Many differences are capped.
	m1, m2 := map[string]any{}, map[string]any{}
	for i := 0; i < 30; i++ {
		m1[string(rune('a'+i))] = provider.Num(int64(i))
	}
	n := provider.Notes(m1, m2)
	if len(n) != maxNotes+1 || !strings.Contains(n[maxNotes], "10 more") {
		t.Fatalf("cap: %d notes, last %q", len(n), n[len(n)-1])
	}
}

func TestSynthesizeBody(t *testing.T) {
	created := time.Date(2026, 1, 9, 10, 30, 0, 0, time.UTC)
	cases := []struct {
		p      provider.Name
		e      provider.Endpoint
		f      snapshot.Fields
		id     string
		object string
	}{
		{provider.OpenAI, provider.ChatCompletions, snapshot.Fields{Content: "hi", TokensUsed: 12, FinishReason: "stop"}, "chatcmpl-tfabc123def456", "chat.completion"},
		{provider.OpenAI, provider.ChatCompletions, snapshot.Fields{TokensUsed: 5, FinishReason: "tool_calls", Model: "gpt-4o-2024-08-06",
			ToolCalls: []any{openaiCall("call_1", "f", "{}")}, Usage: map[string]any{"total_tokens": provider.Num(5), "prompt_tokens": provider.Num(2)}}, "chatcmpl-tfabc123def456", "chat.completion"},
		{provider.OpenAI, provider.Completions, snapshot.Fields{Content: "text", TokensUsed: 3, FinishReason: "length"}, "cmpl-tfabc123def456", "text_completion"},
		{provider.Anthropic, provider.Messages, snapshot.Fields{Content: "hallo", TokensUsed: 40, FinishReason: "end_turn"}, "msg_tfabc123def456", ""},
		{provider.Anthropic, provider.Messages, snapshot.Fields{Content: "", TokensUsed: 40, FinishReason: "tool_use", ToolCalls: []any{anthropicCall("toolu_1", "w", `{"q":"x"}`)}}, "msg_tfabc123def456", ""},
	}
	for _, c := range cases {
		body := synthesizeBody(c.p, c.e, "abc123def456", created, "req-model", c.f)
		if body["id"] != c.id {
			t.Errorf("id %v, want %v", body["id"], c.id)
		}
		if c.object != "" && (body["object"] != c.object || body["created"] != json.Number("1767954600")) {
			t.Errorf("object/created: %v %v", body["object"], body["created"])
		}
		got := mustExtract(t, c.p, c.e, body)
		want := c.f
		if want.Model == "" {
			want.Model = "req-model"
		}
		if !provider.Equal(got, want) {
			t.Errorf("%s %s: extract(SynthesizeBody) differs: %v", c.p, c.e, provider.Diff(want, got))
		}
		if c.f.Usage != nil && !reflect.DeepEqual(got.Usage, c.f.Usage) {
			t.Errorf("usage %v, want %v", got.Usage, c.f.Usage)
		}
		// It must survive JSON and be streamable.
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		back, err := provider.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		var sse bytes.Buffer
		if err := synthesizeStream(c.p, c.e, back, true, &sse, nil); err != nil {
			t.Fatal(err)
		}
		streamed, err := assemble(c.p, c.e, sse.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if sf := mustExtract(t, c.p, c.e, streamed); !provider.Equal(sf, want) {
			t.Errorf("streamed synthesized body differs: %v", provider.Diff(want, sf))
		}
	}
	// Anthropic default usage: everything in output_tokens.
	body := synthesizeBody(provider.Anthropic, provider.Messages, "x", created, "m", snapshot.Fields{TokensUsed: 7, FinishReason: "end_turn"})
	if canonical(body["usage"]) != `{"input_tokens":0,"output_tokens":7}` || canonical(body["content"]) != `[]` {
		t.Fatalf("anthropic placeholders: %s", canonical(body))
	}
}

func TestSynthesizeStreamErrors(t *testing.T) {
	var out bytes.Buffer
	for _, c := range []struct {
		p    provider.Name
		e    provider.Endpoint
		body string
		err  error
	}{
		{provider.OpenAI, provider.ChatCompletions, `{"choices":{}}`, provider.ErrMalformed},
		{provider.OpenAI, provider.ChatCompletions, `{"choices":[{"message":"x"}]}`, provider.ErrMalformed},
		{provider.Anthropic, provider.Messages, `{"content":[]}`, provider.ErrNoUsage},
		{provider.Anthropic, provider.Messages, `{"content":"x","usage":{}}`, provider.ErrMalformed},
	} {
		body, _ := provider.Decode([]byte(c.body))
		if err := synthesizeStream(c.p, c.e, body, false, &out, nil); !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.body, err, c.err)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("bytes written before the error: %q", out.String())
	}
}

func TestPieces(t *testing.T) {
	s := "The quick brown fox jumps over the lazy dog — ünïcödé ☕☕☕☕☕☕☕☕☕☕☕☕☕☕☕☕☕☕"
	p := provider.Pieces(s, 16)
	if strings.Join(p, "") != s || len(p) < 4 {
		t.Fatalf("pieces %q", p)
	}
	for _, x := range p {
		if n := len([]rune(x)); n == 0 || n > 16 {
			t.Fatalf("piece %q has %d runes", x, n)
		}
	}
	if p[0] != "The quick brown " {
		t.Fatalf("first piece %q: should cut after whitespace", p[0])
	}
	if provider.Pieces("", 16) != nil {
		t.Fatal("empty string gives pieces")
	}
}
