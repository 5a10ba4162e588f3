// Command openaigo is the end-to-end client for github.com/openai/openai-go/v3:
// `openaigo plain|stream|tool|default`. It reads OPENAI_BASE_URL and OPENAI_API_KEY
// (the SDK does), attributes every call with traceforge.SourceTransport and
// prints what it saw. Its stream mode asks for stream_options.include_usage.
// Its default mode makes the SDK's default call (model and messages only: no
// temperature, seed or max tokens), which records after traceforge init.
package main

import (
	"context"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const name = "openaigo"

func main() {
	client := openai.NewClient(option.WithHTTPClient(traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)})))
	scenario.RunModes(name, client, map[string]func(context.Context, openai.Client, *scenario.Transcript) error{
		"plain": plain, "stream": stream, "tool": agent, "default": defaultCall})
}

// defaultCall is the call as the SDK's README writes it: no sampling
// settings at all.
func defaultCall(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    openai.ChatModel(scenario.OpenAIModel),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(scenario.Prompt("default"))},
	})
	if err != nil {
		return err
	}
	c := resp.Choices[0]
	tr.Add("content: %q", c.Message.Content)
	tr.Add("finish_reason: %s", c.FinishReason)
	tr.Add("tokens: %d", resp.Usage.TotalTokens)
	return nil
}

func params(messages ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:       openai.ChatModel(scenario.OpenAIModel),
		Messages:    messages,
		Temperature: openai.Float(0),
		Seed:        openai.Int(scenario.Seed),
		MaxTokens:   openai.Int(scenario.MaxTokens),
	}
}

func plain(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	resp, err := client.Chat.Completions.New(ctx, params(openai.UserMessage(scenario.Prompt("plain"))))
	if err != nil {
		return err
	}
	c := resp.Choices[0]
	tr.Add("content: %q", c.Message.Content)
	tr.Add("finish_reason: %s", c.FinishReason)
	tr.Add("tokens: %d", resp.Usage.TotalTokens)
	return nil
}

func stream(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	p := params(openai.UserMessage(scenario.Prompt("stream")))
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := client.Chat.Completions.NewStreaming(ctx, p)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		return err
	}
	if len(acc.Choices) == 0 {
		tr.Add("no choices")
		return nil
	}
	tr.Add("content: %q", acc.Choices[0].Message.Content)
	tr.Add("finish_reason: %s", acc.Choices[0].FinishReason)
	tr.Add("tokens: %d", acc.Usage.TotalTokens)
	return nil
}

// agent runs a two-call tool loop: the model asks for get_weather, the
// client runs it and sends the result back for the final answer.
func agent(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	messages := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(scenario.Prompt("tool"))}
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        scenario.ToolName,
		Description: openai.String(scenario.ToolDescription),
		Parameters:  shared.FunctionParameters(scenario.ToolSchema()),
	})}
	for turn := 1; turn <= 3; turn++ {
		p := params(messages...)
		p.Tools = tools
		resp, err := client.Chat.Completions.New(ctx, p)
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
		messages = append(messages, msg.ToParam())
		for _, tc := range msg.ToolCalls {
			tr.Add("turn %d: tool_call: %s %s", turn, tc.Function.Name, tc.Function.Arguments)
			messages = append(messages, openai.ToolMessage(scenario.RunTool(tc.Function.Name, tc.Function.Arguments), tc.ID))
		}
	}
	tr.Add("no final answer after 3 turns")
	return nil
}
