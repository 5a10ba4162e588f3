package messages_test

import (
	"fmt"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/anthropic/messages"
)

func ExampleFormat_Fields() {
	body, err := provider.Decode([]byte(`{
	  "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
	  "type": "message",
	  "role": "assistant",
	  "model": "claude-sonnet-4-5-20250929",
	  "content": [
	    {"type": "text", "text": "Let me check. "},
	    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
	  ],
	  "stop_reason": "tool_use",
	  "stop_sequence": null,
	  "usage": {"input_tokens": 40, "output_tokens": 12, "cache_read_input_tokens": 100}
	}`))
	if err != nil {
		panic(err)
	}
	f, err := messages.New().Fields(body)
	if err != nil {
		panic(err)
	}
	fmt.Printf("content=%q tokens_used=%d finish_reason=%s model=%s tool_calls=%d\n",
		f.Content, f.TokensUsed, f.FinishReason, f.Model, len(f.ToolCalls))
	// Output:
	// content="Let me check. " tokens_used=152 finish_reason=tool_use model=claude-sonnet-4-5-20250929 tool_calls=1
}
