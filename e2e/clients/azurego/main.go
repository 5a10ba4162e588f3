// Command azurego is the end-to-end client for Azure OpenAI through
// github.com/openai/openai-go/v3's azure package: `azurego plain|stream`.
// azure.WithEndpoint takes AZURE_OPENAI_ENDPOINT (traceforge's root) and an
// API version and replaces every OpenAI default — OPENAI_BASE_URL, also set
// under traceforge, is not read —; the key goes in api-key
// (azure.WithAPIKey). openai-go sends Azure credentials over plain HTTP
// only with azure.WithUnsafeAllowHTTP, and then to loopback on a direct
// connection that bypasses the client's RoundTripper: the call is
// attributed by an SDK middleware around traceforge.SourceTransport
// instead (internal/sdkmw).
package main

import (
	"context"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/sdkmw"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const (
	name       = "azurego"
	deployment = "gpt-4o"
	apiVersion = "2024-10-21"
)

func main() {
	client := openai.NewClient(
		azure.WithEndpoint(os.Getenv("AZURE_OPENAI_ENDPOINT"), apiVersion),
		azure.WithAPIKey(os.Getenv("AZURE_OPENAI_API_KEY")),
		// First, so that it is the outer middleware: the SDK's own
		// (WithUnsafeAllowHTTP's, inlined into main) are then not on the
		// stack SourceTransport reads. The stream tap comes after it,
		// so that it runs once the calling line is taken.
		option.WithMiddleware(sdkmw.Attribute, wiretap.Middleware),
		azure.WithUnsafeAllowHTTP(), // traceforge listens on loopback HTTP
	)
	scenario.RunModes(name, client, map[string]func(context.Context, openai.Client, *scenario.Transcript) error{
		"plain": plain, "stream": stream, "default": defaultCall})
}

func params(messages ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:       openai.ChatModel(deployment), // the deployment: the SDK puts it in the path
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

// defaultCall is the SDK's default call: no temperature, seed or max
// tokens (traceforge init's request defaults fill them in).
func defaultCall(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    openai.ChatModel(deployment),
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

func stream(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	s := client.Chat.Completions.NewStreaming(ctx, params(openai.UserMessage(scenario.Prompt("stream"))))
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
