package e2e_test

import (
	"context"
	"fmt"
	"os"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/internal/fakeupstream"
)

// openai-go: hand the transport's client to option.WithHTTPClient. Recorded
// once against the API (here the fake upstream), then replayed with the API
// gone and no key.
func ExampleTransport_openaiGo() {
	api, _ := fakeupstream.Start(fakeupstream.Options{}) // stands in for https://api.openai.com
	dir, _ := os.MkdirTemp("", "ai-snapshots")
	defer os.RemoveAll(dir)
	for _, mode := range []traceforge.Mode{traceforge.Record, traceforge.Replay} {
		tr, err := traceforge.NewTransport(traceforge.Options{Mode: mode, Dir: dir})
		if err != nil {
			fmt.Println(err)
			return
		}
		client := openai.NewClient(option.WithBaseURL(api.URL+"/v1"), option.WithAPIKey("sk-example"), option.WithHTTPClient(tr.Client()))
		resp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:       "gpt-4o-mini",
			Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Name a snapshot tool")},
			Temperature: openai.Float(0),
			Seed:        openai.Int(42),
			MaxTokens:   openai.Int(20),
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := tr.Close(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s: %s\n", mode, resp.Choices[0].Message.Content)
		api.Close()
	}
	// Output:
	// record: Echo: Name a snapshot tool
	// replay: Echo: Name a snapshot tool
}

// anthropic-sdk-go: the same, with its own option.WithHTTPClient.
func ExampleTransport_anthropicGo() {
	api, _ := fakeupstream.Start(fakeupstream.Options{}) // stands in for https://api.anthropic.com
	dir, _ := os.MkdirTemp("", "ai-snapshots")
	defer os.RemoveAll(dir)
	for _, mode := range []traceforge.Mode{traceforge.Record, traceforge.Replay} {
		tr, err := traceforge.NewTransport(traceforge.Options{Mode: mode, Dir: dir})
		if err != nil {
			fmt.Println(err)
			return
		}
		client := anthropic.NewClient(anthropicoption.WithBaseURL(api.URL), anthropicoption.WithAPIKey("sk-ant-example"), anthropicoption.WithHTTPClient(tr.Client()))
		msg, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
			Model:       "claude-sonnet-4-5",
			MaxTokens:   20,
			Temperature: anthropic.Float(0),
			Messages:    []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Name a snapshot tool"))},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := tr.Close(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s: %s\n", mode, msg.Content[0].Text)
		api.Close()
	}
	// Output:
	// record: Echo: Name a snapshot tool
	// replay: Echo: Name a snapshot tool
}
