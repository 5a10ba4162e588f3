package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

type fixture struct {
	name string
	p    provider.Name
	e    provider.Endpoint
}

var fixtures = []fixture{
	{"openai_chat_text", provider.OpenAI, provider.ChatCompletions},
	{"openai_chat_tools", provider.OpenAI, provider.ChatCompletions},
	{"openai_completions", provider.OpenAI, provider.Completions},
	{"anthropic_text", provider.Anthropic, provider.Messages},
	{"anthropic_tool_use", provider.Anthropic, provider.Messages},
	{"anthropic_thinking", provider.Anthropic, provider.Messages},
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadBody(t testing.TB, name string) map[string]any {
	t.Helper()
	m, err := provider.Decode(readFile(t, name+".json"))
	if err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	return m
}

// assemble feeds data in chunks cut at the given sizes (cycled) and returns
// Done's result.
func assemble(p provider.Name, e provider.Endpoint, data []byte, sizes ...int) (map[string]any, error) {
	a := newAssembler(p, e)
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(sizes) > 0 {
			n = min(sizes[i%len(sizes)], len(data))
		}
		if _, err := a.Write(data[:n]); err != nil {
			return nil, err
		}
		data = data[n:]
	}
	return a.Done()
}

func lineEndings(data []byte) map[string][]byte {
	return map[string][]byte{
		"LF":   data,
		"CRLF": bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")),
		"CR":   bytes.ReplaceAll(data, []byte("\n"), []byte("\r")),
	}
}

func mustExtract(t *testing.T, p provider.Name, e provider.Endpoint, body map[string]any) snapshot.Fields {
	t.Helper()
	f, err := extract(p, e, body)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return f
}

func TestAssembleFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			body := loadBody(t, fx.name)
			want := mustExtract(t, fx.p, fx.e, body)
			if want.TokensUsed == 0 || want.FinishReason == "" {
				t.Fatalf("fixture body extracts to %+v", want)
			}
			for ending, data := range lineEndings(readFile(t, fx.name+".sse")) {
				got, err := assemble(fx.p, fx.e, data)
				if err != nil {
					t.Fatalf("%s: assemble: %v", ending, err)
				}
				gf := mustExtract(t, fx.p, fx.e, got)
				if !provider.Equal(want, gf) {
					t.Fatalf("%s: streamed fields differ: %v", ending, provider.Diff(want, gf))
				}
				if !reflect.DeepEqual(want.Usage, gf.Usage) {
					t.Errorf("%s: usage %v, want %v", ending, gf.Usage, want.Usage)
				}
				if !reflect.DeepEqual(want.ToolCalls, gf.ToolCalls) && fx.p == provider.OpenAI {
					t.Errorf("%s: tool calls %v, want %v", ending, gf.ToolCalls, want.ToolCalls)
				}
				// The assembled message is the non-streamed body itself
				// (OpenAI adds "annotations": [] only to non-streamed bodies).
				wantBody := provider.DeepCopy(body).(map[string]any)
				if fx.e == provider.ChatCompletions {
					delete(wantBody["choices"].([]any)[0].(map[string]any)["message"].(map[string]any), "annotations")
				}
				if c1, c2 := canonical(got), canonical(wantBody); c1 != c2 {
					t.Errorf("%s: assembled body\n%s\nwant\n%s", ending, c1, c2)
				}
				if _, ok := got["obfuscation"]; ok {
					t.Errorf("%s: obfuscation kept", ending)
				}
			}
		})
	}
}

func TestAssembleEverySplit(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			for ending, data := range lineEndings(readFile(t, fx.name+".sse")) {
				whole, err := assemble(fx.p, fx.e, data)
				if err != nil {
					t.Fatal(err)
				}
				want := canonical(whole)
				check := func(desc string, sizes ...int) {
					got, err := assemble(fx.p, fx.e, data, sizes...)
					if err != nil {
						t.Fatalf("%s %s: %v", ending, desc, err)
					}
					if c := canonical(got); c != want {
						t.Fatalf("%s %s: got\n%s\nwant\n%s", ending, desc, c, want)
					}
				}
				// Every split size for LF; the other line endings only
				// need the sizes that move a boundary between CR and LF.
				maxSize := len(data)
				if ending != "LF" {
					maxSize = 64
				}
				step := 1
				if raceEnabled || testing.Short() {
					// Every size up to beyond the longest event, then a sample.
					step = 31
				}
				for size := 1; size <= maxSize; size++ {
					if size > 512 && size%step != 0 {
						continue
					}
					check("size "+itoa(size), size)
				}
				for i := 0; i < 200; i++ {
					sizes := make([]int, 1+rng.Intn(20))
					for j := range sizes {
						sizes[j] = 1 + rng.Intn(40)
					}
					check("random", sizes...)
				}
			}
		})
	}
}

func itoa(i int) string { return string(provider.Num(int64(i))) }

func TestRoundTrip(t *testing.T) {
	for _, fx := range fixtures {
		for _, includeUsage := range []bool{true, false} {
			name := fx.name + map[bool]string{true: "/usage", false: "/nousage"}[includeUsage]
			t.Run(name, func(t *testing.T) {
				body := loadBody(t, fx.name)
				want := mustExtract(t, fx.p, fx.e, body)
				var out bytes.Buffer
				flushes := 0
				if err := synthesizeStream(fx.p, fx.e, body, includeUsage, &out, func() { flushes++ }); err != nil {
					t.Fatal(err)
				}
				stream := out.Bytes()
				events := strings.Split(strings.TrimSuffix(string(stream), "\n\n"), "\n\n")
				if !bytes.HasSuffix(stream, []byte("\n\n")) || flushes != len(events) {
					t.Fatalf("%d flushes for %d events; stream:\n%s", flushes, len(events), stream)
				}
				for _, ev := range events {
					if fx.p == provider.Anthropic && !strings.HasPrefix(ev, "event: ") {
						t.Fatalf("Anthropic event without event line: %q", ev)
					}
					if fx.p == provider.OpenAI && ev != "data: [DONE]" && strings.Contains(ev, `"usage"`) != includeUsage {
						t.Fatalf("includeUsage=%v but event %q", includeUsage, ev)
					}
				}
				var again bytes.Buffer
				if err := synthesizeStream(fx.p, fx.e, body, includeUsage, &again, nil); err != nil || !bytes.Equal(again.Bytes(), stream) {
					t.Fatalf("not deterministic (err %v)", err)
				}
				for _, sizes := range [][]int{nil, {1}, {7, 3}} {
					got, err := assemble(fx.p, fx.e, stream, sizes...)
					if err != nil {
						t.Fatalf("assemble %v: %v\n%s", sizes, err, stream)
					}
					if fx.p == provider.OpenAI && !includeUsage {
						if _, err := extract(fx.p, fx.e, got); !errors.Is(err, provider.ErrNoUsage) {
							t.Fatalf("stream without usage: Extract error %v, want ErrNoUsage", err)
						}
						got["usage"] = body["usage"]
					}
					gf := mustExtract(t, fx.p, fx.e, got)
					if !provider.Equal(want, gf) {
						t.Fatalf("round trip differs: %v", provider.Diff(want, gf))
					}
					if !reflect.DeepEqual(want.Usage, gf.Usage) {
						t.Fatalf("usage %v, want %v", gf.Usage, want.Usage)
					}
					if fx.p == provider.Anthropic && canonical(got) != canonical(body) {
						t.Fatalf("assembled\n%s\nwant\n%s", canonical(got), canonical(body))
					}
				}
			})
		}
	}
}

// completeAt returns the length of the shortest prefix of a fixture stream
// that may assemble: everything before the usage chunk (OpenAI) or the end
// of message_stop (Anthropic) must be a broken stream.
func completeAt(t *testing.T, fx fixture, data []byte) int {
	t.Helper()
	var marker string
	if fx.p == provider.OpenAI {
		marker = `"choices":[],`
	} else {
		marker = "event: message_stop"
	}
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		t.Fatalf("no %s in %s", marker, fx.name)
	}
	end := bytes.Index(data[i:], []byte("\n\n"))
	return i + end + 2
}

func TestBrokenStreams(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			data := readFile(t, fx.name+".sse")
			limit := completeAt(t, fx, data)
			// Cut at every event boundary and inside every event: just after
			// the boundary, in the middle, and before and between the two
			// newlines that end it.
			var cuts []int
			for start := 0; start < limit; {
				n := bytes.Index(data[start:], []byte("\n\n")) + 2
				cuts = append(cuts, start, start+1, start+n/2, start+n-2, start+n-1)
				start += n
			}
			for _, cut := range cuts {
				if cut >= limit {
					continue
				}
				_, err := assemble(fx.p, fx.e, data[:cut])
				if !errors.Is(err, provider.ErrBrokenStream) {
					t.Fatalf("cut at %d/%d: err = %v, want ErrBrokenStream", cut, len(data), err)
				}
			}
			// A final event without its blank line is not dispatched (SSE).
			if _, err := assemble(fx.p, fx.e, data[:limit-1]); !errors.Is(err, provider.ErrBrokenStream) {
				t.Fatalf("last event without blank line: %v", err)
			}
			if _, err := assemble(fx.p, fx.e, data[:limit]); err != nil {
				t.Fatalf("complete prefix: %v", err)
			}
		})
	}
}

func TestOpenAIWithoutUsageCompleteOnFinish(t *testing.T) {
	// A stream without include_usage is complete once every choice finished,
	// [DONE] or not.
	s := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	got, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["usage"]; ok {
		t.Fatal("usage invented")
	}
	// [DONE] without finish_reason is broken.
	s2 := `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}` + "\n\ndata: [DONE]\n\n"
	if _, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(s2)); !errors.Is(err, provider.ErrBrokenStream) {
		t.Fatalf("no finish_reason: %v", err)
	}
	// Every choice must finish (n = 2).
	s3 := `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"},{"index":1,"delta":{"content":"b"},"finish_reason":null}]}` + "\n\ndata: [DONE]\n\n"
	if _, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(s3)); !errors.Is(err, provider.ErrBrokenStream) {
		t.Fatalf("unfinished second choice: %v", err)
	}
	if _, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte("")); !errors.Is(err, provider.ErrBrokenStream) {
		t.Fatalf("empty stream: %v", err)
	}
}

func TestErrorEvents(t *testing.T) {
	cases := []struct {
		name string
		p    provider.Name
		e    provider.Endpoint
		file string
		ev   string
	}{
		{"openai data error", provider.OpenAI, provider.ChatCompletions, "openai_chat_text",
			`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}` + "\n\n"},
		{"openai event error", provider.OpenAI, provider.Completions, "openai_completions",
			"event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n"},
		{"anthropic error", provider.Anthropic, provider.Messages, "anthropic_text",
			"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := readFile(t, c.file+".sse")
			events := bytes.SplitAfter(data, []byte("\n\n"))
			// error after the third event, then the rest of the stream
			var s []byte
			for i, ev := range events {
				if i == 3 {
					s = append(s, c.ev...)
				}
				s = append(s, ev...)
			}
			_, err := assemble(c.p, c.e, s, 5)
			if !errors.Is(err, provider.ErrStreamError) || !errors.Is(err, provider.ErrBrokenStream) {
				t.Fatalf("err = %v, want ErrStreamError and ErrBrokenStream", err)
			}
			if !strings.Contains(err.Error(), "event ") {
				t.Errorf("error %q does not name the event", err)
			}
		})
	}
}

func TestMalformedStreams(t *testing.T) {
	cases := []struct {
		name string
		p    provider.Name
		e    provider.Endpoint
		s    string
	}{
		{"openai not json", provider.OpenAI, provider.ChatCompletions, "data: {\"id\": \n\n"},
		{"openai array", provider.OpenAI, provider.ChatCompletions, "data: [1,2]\n\n"},
		{"openai choices type", provider.OpenAI, provider.ChatCompletions, `data: {"choices":{}}` + "\n\n"},
		{"openai content type", provider.OpenAI, provider.ChatCompletions, `data: {"choices":[{"index":0,"delta":{"content":5}}]}` + "\n\n"},
		{"anthropic not json", provider.Anthropic, provider.Messages, "event: message_start\ndata: {oops}\n\n"},
		{"anthropic delta before start", provider.Anthropic, provider.Messages, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"},
		{"anthropic bad tool json", provider.Anthropic, provider.Messages,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[],\"usage\":{}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAssembler(c.p, c.e)
			_, werr := a.Write([]byte(c.s))
			if !errors.Is(werr, provider.ErrMalformed) {
				t.Fatalf("Write err = %v, want ErrMalformed", werr)
			}
			if _, err := a.Write([]byte("data: [DONE]\n\n")); !errors.Is(err, provider.ErrMalformed) {
				t.Fatalf("error not sticky: %v", err)
			}
			if _, err := a.Done(); !errors.Is(err, provider.ErrMalformed) {
				t.Fatalf("Done err = %v", err)
			}
		})
	}
}

func TestSSEParsing(t *testing.T) {
	// Multi-line data, comments, id/retry fields, a leading BOM, an event
	// with no data, "data:" without a space, and a trailing event without
	// its blank line (never dispatched).
	s := "\xEF\xBB\xBF: comment\nid: 1\nretry: 100\n\n" +
		"event: message_start\ndata: {\"type\":\"message_start\",\n" +
		"data: \"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"c\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: ping\n\n" +
		"event: content_block_start\ndata:{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		": keepalive\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\n"
	_, err := assemble(provider.Anthropic, provider.Messages, []byte(s), 1)
	if !errors.Is(err, provider.ErrBrokenStream) {
		t.Fatalf("no message_stop: %v", err)
	}
	body, err := assemble(provider.Anthropic, provider.Messages, []byte(s+"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	f := mustExtract(t, provider.Anthropic, provider.Messages, body)
	if f.Content != "ok" || f.TokensUsed != 5 || f.FinishReason != "end_turn" {
		t.Fatalf("fields %+v", f)
	}
	// Missing event: lines fall back to the data's type.
	noNames := strings.ReplaceAll(s, "event: ", "x-ignored: ")
	if _, err := assemble(provider.Anthropic, provider.Messages, []byte(noNames+"data: {\"type\":\"message_stop\"}\n\n"), 3); err != nil {
		t.Fatalf("without event lines: %v", err)
	}
}

func TestOpenAIAssemblyDetails(t *testing.T) {
	// Two choices interleaved, a refusal, tool calls without index (some
	// compatible servers), logprobs, and an Azure-style first chunk.
	chunks := []string{
		`{"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[{"prompt_index":0}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":5,"model":"m","choices":[{"index":1,"delta":{"role":"assistant","content":"B"},"logprobs":{"content":[{"token":"B","logprob":-0.1}]},"finish_reason":null},{"index":0,"delta":{"role":"assistant","refusal":null},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":5,"model":"m","choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null},{"index":1,"delta":{"content":"C"},"logprobs":{"content":[{"token":"C","logprob":-0.2}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":5,"model":"m","choices":[{"index":0,"delta":{"refusal":" help."},"finish_reason":"stop"},{"index":1,"delta":{"tool_calls":[{"id":"x1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":5,"model":"m","choices":[{"index":1,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":5,"model":"m","choices":[{"index":1,"delta":{"tool_calls":[{"id":"x2","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
	}
	var s string
	for _, c := range chunks {
		s += "data: " + c + "\n\n"
	}
	s += "data: [DONE]\n\n"
	body, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(s), 2)
	if err != nil {
		t.Fatal(err)
	}
	if body["id"] != "c" || string(body["created"].(json.Number)) != "5" || body["prompt_filter_results"] == nil {
		t.Fatalf("meta: %v", body)
	}
	choices := body["choices"].([]any)
	c0 := choices[0].(map[string]any)["message"].(map[string]any)
	if c0["refusal"] != "I can't help." || c0["content"] != nil {
		t.Fatalf("choice 0: %v", c0)
	}
	c1 := choices[1].(map[string]any)
	m1 := c1["message"].(map[string]any)
	if m1["content"] != "BC" {
		t.Fatalf("choice 1: %v", m1)
	}
	calls := m1["tool_calls"].([]any)
	if len(calls) != 2 || canonical(calls) != `[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"x1","type":"function"},{"function":{"arguments":"{}","name":"g"},"id":"x2","type":"function"}]` {
		t.Fatalf("tool calls: %s", canonical(calls))
	}
	if lp := canonical(c1["logprobs"]); lp != `{"content":[{"logprob":-0.1,"token":"B"},{"logprob":-0.2,"token":"C"}]}` {
		t.Fatalf("logprobs: %s", lp)
	}
	// The refusal choice is choice 0: Extract sees its null content as "".
	f := mustExtract(t, provider.OpenAI, provider.ChatCompletions, withUsage(body))
	if f.Content != "" || f.FinishReason != "stop" {
		t.Fatalf("fields: %+v", f)
	}
}

func withUsage(b map[string]any) map[string]any {
	b["usage"] = map[string]any{"total_tokens": provider.Num(3)}
	return b
}
