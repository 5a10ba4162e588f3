package provider_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// realityFixtures are answers whose shapes traceforge once refused or
// lost (DESIGN §13.3): each .sse assembles to its .json, and the
// synthesized stream of that body assembles to it again.
var realityFixtures = []struct {
	fixture
	// streamHas are strings a synthesized stream of the body carries.
	streamHas []string
}{
	// Mistral's thinking models answer with content as an array of parts.
	{fixture{"openai_reality_content_parts", provider.OpenAI, provider.ChatCompletions},
		[]string{`"delta":{"role":"assistant","content":[{"thinking":[{"text":"The user asks`}},
	// Groq: usage on the last chunk (top-level and in x_groq), sent
	// unasked; the synthesized stream carries x_groq on its last chunk.
	{fixture{"openai_reality_groq", provider.OpenAI, provider.ChatCompletions},
		[]string{`"finish_reason":"stop"}],"x_groq":{"id":"req_01kf0a1b2c3d4e5f6g7h8j9k0m","usage":{`}},
	// A server behind the Hugging Face router: choice members of its own
	// (seed) and usage on the last chunk.
	{fixture{"openai_reality_hf_router", provider.OpenAI, provider.ChatCompletions},
		[]string{`"finish_reason":"stop","seed":4527391856213497}]`}},
	// Anthropic: a compaction block (compaction_delta), thinking with its
	// signature, a server tool call and its result, a cited text, and a
	// block and delta type traceforge does not know.
	{fixture{"anthropic_reality_blocks", provider.Anthropic, provider.Messages},
		[]string{`"type":"compaction_delta","content":"The user is planning a trip`, `"encrypted_content":"EoQBCkYIBxgCKkBzdW1tYXJ5"`,
			`"type":"signature_delta"`, `"type":"citations_delta"`, `"type":"server_tool_use"`, `"type":"web_search_tool_result"`,
			`"content_block":{"note":"kept in order","type":"future_block","weight":2}`}},
}

func TestRealityFixturesAssemble(t *testing.T) {
	for _, fx := range realityFixtures {
		t.Run(fx.name, func(t *testing.T) {
			body := loadBody(t, fx.name)
			want := mustExtract(t, fx.p, fx.e, body)
			for ending, data := range lineEndings(readFile(t, fx.name+".sse")) {
				for _, sizes := range [][]int{nil, {1}, {7, 3}, {64}} {
					got, err := assemble(fx.p, fx.e, data, sizes...)
					if err != nil {
						t.Fatalf("%s %v: %v", ending, sizes, err)
					}
					if c1, c2 := canonical(got), canonical(body); c1 != c2 {
						t.Fatalf("%s %v: assembled body\n%s\nwant\n%s", ending, sizes, c1, c2)
					}
					if gf := mustExtract(t, fx.p, fx.e, got); !provider.Equal(want, gf) {
						t.Fatalf("%s: fields differ: %v", ending, provider.Diff(want, gf))
					}
				}
			}
		})
	}
}

func TestRealityFixturesRoundTrip(t *testing.T) {
	for _, fx := range realityFixtures {
		t.Run(fx.name, func(t *testing.T) {
			body := loadBody(t, fx.name)
			var out bytes.Buffer
			if err := synthesizeStream(fx.p, fx.e, body, true, &out, nil); err != nil {
				t.Fatal(err)
			}
			for _, s := range fx.streamHas {
				if !strings.Contains(out.String(), s) {
					t.Errorf("the synthesized stream lacks %s:\n%s", s, out.String())
				}
			}
			got, err := assemble(fx.p, fx.e, out.Bytes(), 5)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if c1, c2 := canonical(got), canonical(body); c1 != c2 {
				t.Fatalf("replayed stream assembles to\n%s\nwant\n%s", c1, c2)
			}
		})
	}
}

// TestContentPartsFields: content given as parts has the text of its text
// parts as the snapshot's content; other parts stay in the body only.
func TestContentPartsFields(t *testing.T) {
	f := mustExtract(t, provider.OpenAI, provider.ChatCompletions, loadBody(t, "openai_reality_content_parts"))
	if f.Content != "Paris." || f.FinishReason != "stop" || f.TokensUsed != 40 {
		t.Fatalf("fields %+v", f)
	}
	if got := provider.PartsText([]any{"odd", map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "image_url"}, map[string]any{"type": "text", "text": 7}, map[string]any{"type": "text", "text": "b"}}); got != "ab" {
		t.Fatalf("PartsText = %q", got)
	}
}

// TestStreamedContentParts: string deltas before and between array deltas
// become text parts; adjacent text parts are merged; other parts are kept
// in order.
func TestStreamedContentParts(t *testing.T) {
	const stream = `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"lo"},{"type":"reference","reference_ids":[1]}]},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" wor"},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"ld"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}

data: [DONE]

`
	got, err := assemble(provider.OpenAI, provider.ChatCompletions, []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	msg := got["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	want := `[{"text":"Hello","type":"text"},{"reference_ids":[1],"type":"reference"},{"text":" world","type":"text"}]`
	if c := canonical(msg["content"]); c != want {
		t.Fatalf("content %s, want %s", c, want)
	}
	if f := mustExtract(t, provider.OpenAI, provider.ChatCompletions, got); f.Content != "Hello world" {
		t.Fatalf("content field %q", f.Content)
	}
}
