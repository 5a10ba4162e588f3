// Command demo is the example application of traceforge's quick start: a
// tiny "release notes assistant" that calls an OpenAI-compatible API three
// ways — a plain completion, a streamed one, and a two-step tool call — the
// way most Go applications do, with github.com/sashabaranov/go-openai.
//
// It reads OPENAI_BASE_URL and OPENAI_API_KEY (traceforge record/verify set
// the base URL), and DEMO_TOPIC changes the prompt so the demo can show drift.
// Every request is attributed to its line with traceforge.SourceTransport.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	openai "github.com/sashabaranov/go-openai"

	"github.com/traceforge/traceforge"
)

const model = "gpt-4o-mini"

func main() {
	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		cfg.BaseURL = base
	}
	cfg.HTTPClient = traceforge.NewHTTPClient(nil)
	client := openai.NewClientWithConfig(cfg)
	topic := os.Getenv("DEMO_TOPIC")
	if topic == "" {
		topic = "traceforge 1.0 adds snapshot testing for LLM calls"
	}
	ctx := context.Background()
	if err := run(ctx, client, topic); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, client *openai.Client, topic string) error {
	summary, err := summarize(ctx, client, topic)
	if err != nil {
		return err
	}
	fmt.Println("summary: ", summary)
	tagline, err := streamTagline(ctx, client, topic)
	if err != nil {
		return err
	}
	fmt.Println("tagline: ", tagline)
	answer, err := weather(ctx, client)
	if err != nil {
		return err
	}
	fmt.Println("weather: ", answer)
	return nil
}

// request fixes what makes a call deterministic: temperature 0 (go-openai
// drops a zero, so it sends the smallest float32, which traceforge counts as
// zero) and a seed.
func request(messages ...openai.ChatCompletionMessage) openai.ChatCompletionRequest {
	seed := 42
	return openai.ChatCompletionRequest{
		Model:               model,
		Messages:            messages,
		Temperature:         math.SmallestNonzeroFloat32,
		Seed:                &seed,
		MaxCompletionTokens: 60,
	}
}

func user(text string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
}

func summarize(ctx context.Context, client *openai.Client, topic string) (string, error) {
	resp, err := client.CreateChatCompletion(ctx, request(
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: "You write one-line release notes."},
		user("Summarize: "+topic),
	))
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Message.Content, nil
}

func streamTagline(ctx context.Context, client *openai.Client, topic string) (string, error) {
	s, err := client.CreateChatCompletionStream(ctx, request(user("Write a tagline for: "+topic)))
	if err != nil {
		return "", err
	}
	defer s.Close()
	var out string
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return "", err
		}
		for _, c := range chunk.Choices {
			out += c.Delta.Content
		}
	}
}

func weather(ctx context.Context, client *openai.Client) (string, error) {
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "get_weather",
		Description: "Current weather for a city",
		Parameters:  map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	}}}
	messages := []openai.ChatCompletionMessage{user("What is the weather in Paris? Use the tool.")}
	req := request(messages...)
	req.Tools = tools
	first, err := client.CreateChatCompletion(ctx, req)
	if err != nil {
		return "", err
	}
	msg := first.Choices[0].Message
	if len(msg.ToolCalls) == 0 {
		return msg.Content, nil
	}
	messages = append(messages, msg)
	for _, call := range msg.ToolCalls {
		messages = append(messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleTool, ToolCallID: call.ID,
			Content: `{"city":"Paris","forecast":"sunny","celsius":21}`,
		})
	}
	req = request(messages...)
	req.Tools = tools
	final, err := client.CreateChatCompletion(ctx, req)
	if err != nil {
		return "", err
	}
	return final.Choices[0].Message.Content, nil
}
