package bedrock

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

func TestInvokeRoutesAnthropicModelsOnly(t *testing.T) {
	f := NewInvokeAnthropic()
	for path, want := range map[string]string{
		"/model/anthropic.claude-3-haiku-20240307-v1:0/invoke":                            "/model/anthropic.claude-3-haiku-20240307-v1:0/invoke",
		"/model/us.anthropic.claude-3-5-sonnet-20241022-v2:0/invoke-with-response-stream": "/model/us.anthropic.claude-3-5-sonnet-20241022-v2:0/invoke",
	} {
		if e, ok := f.Route("POST", path); !ok || string(e) != want {
			t.Errorf("Route(%s) = %q, %v", path, e, ok)
		}
	}
	for _, p := range []string{"/model/amazon.nova-lite-v1:0/invoke", "/model/meta.llama3-8b-instruct-v1:0/invoke", "/model/anthropic.claude-3-haiku-20240307-v1:0/converse"} {
		if _, ok := f.Route("POST", p); ok {
			t.Errorf("Route(%s) owned", p)
		}
	}
	if !f.Streams("/model/anthropic.x/invoke-with-response-stream", nil) || f.Streams("/model/anthropic.x/invoke", nil) {
		t.Error("Streams by operation")
	}
	req := map[string]any{"anthropic_version": "bedrock-2023-05-31", "stream": true, "messages": []any{}}
	if err := f.BindPath("/model/anthropic.x/invoke", req); err != nil || req["model"] != "anthropic.x" {
		t.Fatal(err, req)
	}
	if lb := f.LiveBody(req); lb["model"] != nil || lb["stream"] != nil || lb["anthropic_version"] == nil {
		t.Fatalf("LiveBody = %v", lb)
	}
	if typ, _ := f.MissError(); typ != "ResourceNotFoundException" {
		t.Fatal(typ)
	}
}

const claudeAnswer = `{"id":"msg_bdrk_01","type":"message","role":"assistant","model":"claude-3-haiku-20240307",
 "content":[{"type":"text","text":"Hello there, Ada Lovelace!"},{"type":"tool_use","id":"toolu_bdrk_1","name":"get_weather","input":{"city":"Paris"}}],
 "stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":9}}`

func TestInvokeStreamRoundTrip(t *testing.T) {
	f := NewInvokeAnthropic()
	body := decode(t, claudeAnswer)
	var b bytes.Buffer
	if err := f.SynthesizeStream(body, false, &b, nil); err != nil {
		t.Fatal(err)
	}
	var fr FrameReader
	frames := 0
	if err := fr.Feed(b.Bytes(), func(fm Frame) error {
		frames++
		if fm.Type != "chunk" || fm.MessageType != "event" {
			t.Fatalf("frame %+v", fm)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 13, b.Len()} {
		a := f.NewAssembler()
		raw := b.Bytes()
		for i := 0; i < len(raw); i += n {
			if _, err := a.Write(raw[i:min(i+n, len(raw))]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := a.Done()
		if err != nil {
			t.Fatal(err)
		}
		x, _ := provider.Marshal(got)
		y, _ := provider.Marshal(body)
		if !bytes.Equal(x, y) {
			t.Fatalf("pieces of %d:\n got %s\nwant %s", n, x, y)
		}
	}
	fl, err := f.Fields(body)
	if err != nil || fl.Content != "Hello there, Ada Lovelace!" || fl.TokensUsed != 21 || len(fl.ToolCalls) != 1 || fl.FinishReason != "tool_use" {
		t.Fatalf("%+v %v", fl, err)
	}
}

// TestInvokeStreamAsBedrockSendsIt: chunk frames with Bedrock's invocation
// metrics on message_stop and "p" padding assemble; an exception frame
// breaks the stream.
func TestInvokeStreamAsBedrockSendsIt(t *testing.T) {
	var b bytes.Buffer
	chunk := func(ev string) {
		fr, err := EncodeEvent("chunk", map[string]any{"bytes": base64.StdEncoding.EncodeToString([]byte(ev)), "p": "abcdefgh"})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(fr)
	}
	chunk(`{"type":"message_start","message":{"id":"msg_bdrk_1","type":"message","role":"assistant","model":"claude-3-haiku-20240307","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
	chunk(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	chunk(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`)
	chunk(`{"type":"content_block_stop","index":0}`)
	chunk(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)
	chunk(`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":5,"outputTokenCount":2,"invocationLatency":100,"firstByteLatency":50}}`)
	a := NewInvokeAnthropic().NewAssembler()
	_, _ = a.Write(b.Bytes())
	body, err := a.Done()
	if err != nil {
		t.Fatal(err)
	}
	fl, err := NewInvokeAnthropic().Fields(body)
	if err != nil || fl.Content != "Hi" || fl.FinishReason != "end_turn" || fl.TokensUsed != 7 {
		t.Fatalf("%+v %v", fl, err)
	}
	ex, _ := EncodeException("modelStreamErrorException", "boom")
	a = NewInvokeAnthropic().NewAssembler()
	_, _ = a.Write(ex)
	if _, err := a.Done(); !errors.Is(err, provider.ErrStreamError) {
		t.Fatalf("exception: %v", err)
	}
}
