// Command goopenai is the end-to-end client for github.com/sashabaranov/go-openai:
// `goopenai plain|stream|tool`. go-openai reads no environment, so the base
// URL and key come from OPENAI_BASE_URL and OPENAI_API_KEY here. Every call is
// attributed with traceforge.SourceTransport. Its stream mode does not ask for
// usage (the proxy must add and hide it).
//
// go-openai drops a zero temperature from the request (omitempty), so it
// sends math.SmallestNonzeroFloat32, which traceforge's determinism policy
// counts as zero. It sends max_completion_tokens (go-openai deprecated
// max_tokens), which traceforge accepts as max_tokens.
package main

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"os"

	openai "github.com/sashabaranov/go-openai"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const name = "goopenai"

func main() {
	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		cfg.BaseURL = base
	}
	cfg.HTTPClient = traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)})
	client := openai.NewClientWithConfig(cfg)
	scenario.Run(name, client, plain, stream, agent)
}

func request(messages ...openai.ChatCompletionMessage) openai.ChatCompletionRequest {
	seed := scenario.Seed
	return openai.ChatCompletionRequest{
		Model:               scenario.OpenAIModel,
		Messages:            messages,
		Temperature:         math.SmallestNonzeroFloat32,
		Seed:                &seed,
		MaxCompletionTokens: scenario.MaxTokens,
	}
}

func user(text string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
}

func plain(ctx context.Context, client *openai.Client, tr *scenario.Transcript) error {
	resp, err := client.CreateChatCompletion(ctx, request(user(scenario.Prompt("plain"))))
	if err != nil {
		return err
	}
	tr.Add("content: %q", resp.Choices[0].Message.Content)
	tr.Add("finish_reason: %s", resp.Choices[0].FinishReason)
	tr.Add("tokens: %d", resp.Usage.TotalTokens)
	return nil
}

func stream(ctx context.Context, client *openai.Client, tr *scenario.Transcript) error {
	s, err := client.CreateChatCompletionStream(ctx, request(user(scenario.Prompt("stream"))))
	if err != nil {
		return err
	}
	defer s.Close()
	var content, finish string
	usage := "none"
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if chunk.Usage != nil {
			// Not asked for: the proxy and the replay must not deliver it.
			usage = "delivered without being asked for"
		}
		for _, c := range chunk.Choices {
			content += c.Delta.Content
			if c.FinishReason != "" {
				finish = string(c.FinishReason)
			}
		}
	}
	tr.Add("content: %q", content)
	tr.Add("finish_reason: %s", finish)
	tr.Add("usage: %s", usage)
	return nil
}

// agent runs a two-call tool loop: the model asks for get_weather, the
// client runs it and sends the result back for the final answer.
func agent(ctx context.Context, client *openai.Client, tr *scenario.Transcript) error {
	messages := []openai.ChatCompletionMessage{user(scenario.Prompt("tool"))}
	tools := []openai.Tool{{
		Type: openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{
			Name:        scenario.ToolName,
			Description: scenario.ToolDescription,
			Parameters:  scenario.ToolSchemaJSON(),
		},
	}}
	for turn := 1; turn <= 3; turn++ {
		req := request(messages...)
		req.Tools = tools
		resp, err := client.CreateChatCompletion(ctx, req)
		if err != nil {
			return err
		}
		msg := resp.Choices[0].Message
		tr.Add("turn %d: finish_reason: %s", turn, resp.Choices[0].FinishReason)
		tr.Add("turn %d: tokens: %d", turn, resp.Usage.TotalTokens)
		if len(msg.ToolCalls) == 0 {
			tr.Add("turn %d: content: %q", turn, msg.Content)
			return nil
		}
		messages = append(messages, msg)
		for _, tc := range msg.ToolCalls {
			tr.Add("turn %d: tool_call: %s %s", turn, tc.Function.Name, tc.Function.Arguments)
			messages = append(messages, openai.ChatCompletionMessage{
				Role:       openai.ChatMessageRoleTool,
				Content:    scenario.RunTool(tc.Function.Name, tc.Function.Arguments),
				ToolCallID: tc.ID,
			})
		}
	}
	tr.Add("no final answer after 3 turns")
	return nil
}
