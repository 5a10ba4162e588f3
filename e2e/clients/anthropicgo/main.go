// Command anthropicgo is the end-to-end client for
// github.com/anthropics/anthropic-sdk-go: `anthropicgo plain|stream|tool|default`. The
// SDK reads ANTHROPIC_BASE_URL (without /v1) and ANTHROPIC_API_KEY; every call
// is attributed with traceforge.SourceTransport.
//
// It uses the v1 line of the SDK: v2 dropped the temperature parameter, and
// traceforge's determinism policy needs temperature 0 (with v2, send it with
// option.WithJSONSet("temperature", 0)). Its default mode makes the SDK's
// default call as its README writes it (model, max_tokens — the API requires
// it — and messages; no temperature), recorded after `traceforge init` wrote
// the request defaults into the project's config.
package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const name = "anthropicgo"

func main() {
	client := anthropic.NewClient(option.WithHTTPClient(traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)})))
	scenario.RunModes(name, client, map[string]func(context.Context, anthropic.Client, *scenario.Transcript) error{
		"plain": plain, "stream": stream, "tool": agent, "default": defaultCall})
}

// defaultCall is the call as the SDK's README writes it: no temperature.
func defaultCall(ctx context.Context, client anthropic.Client, tr *scenario.Transcript) error {
	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     anthropic.Model(scenario.AnthropicModel),
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(scenario.Prompt("default")))},
	})
	if err != nil {
		return err
	}
	describe(tr, "", msg)
	return nil
}

func params(messages ...anthropic.MessageParam) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:       anthropic.Model(scenario.AnthropicModel),
		Messages:    messages,
		Temperature: anthropic.Float(0),
		MaxTokens:   scenario.MaxTokens,
	}
}

// describe adds a message's text, tool calls, stop reason and token count.
func describe(tr *scenario.Transcript, prefix string, m *anthropic.Message) {
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			tr.Add("%stool_call: %s %s", prefix, b.Name, canonical(b.Input))
		}
	}
	tr.Add("%scontent: %q", prefix, text.String())
	tr.Add("%sstop_reason: %s", prefix, m.StopReason)
	u := m.Usage
	tr.Add("%stokens: %d", prefix, u.InputTokens+u.OutputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens)
}

// canonical re-encodes JSON compactly with sorted keys, so that a replayed
// body that spells the same value differently prints the same.
func canonical(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func plain(ctx context.Context, client anthropic.Client, tr *scenario.Transcript) error {
	msg, err := client.Messages.New(ctx, params(anthropic.NewUserMessage(anthropic.NewTextBlock(scenario.Prompt("plain")))))
	if err != nil {
		return err
	}
	describe(tr, "", msg)
	return nil
}

func stream(ctx context.Context, client anthropic.Client, tr *scenario.Transcript) error {
	s := client.Messages.NewStreaming(ctx, params(anthropic.NewUserMessage(anthropic.NewTextBlock(scenario.Prompt("stream")))))
	defer s.Close()
	var msg anthropic.Message
	for s.Next() {
		if err := msg.Accumulate(s.Current()); err != nil {
			return err
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	describe(tr, "", &msg)
	return nil
}

// agent runs a two-call tool loop: the model asks for get_weather, the
// client runs it and sends the result back for the final answer.
func agent(ctx context.Context, client anthropic.Client, tr *scenario.Transcript) error {
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(scenario.Prompt("tool")))}
	schema := scenario.ToolSchema()
	tool := anthropic.ToolParam{
		Name:        scenario.ToolName,
		Description: anthropic.String(scenario.ToolDescription),
		InputSchema: anthropic.ToolInputSchemaParam{
			Properties: schema["properties"],
			Required:   schema["required"].([]string),
		},
	}
	for turn := 1; turn <= 3; turn++ {
		p := params(messages...)
		p.Tools = []anthropic.ToolUnionParam{{OfTool: &tool}}
		msg, err := client.Messages.New(ctx, p)
		if err != nil {
			return err
		}
		prefix := "turn " + string(rune('0'+turn)) + ": "
		describe(tr, prefix, msg)
		var results []anthropic.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				results = append(results, anthropic.NewToolResultBlock(b.ID, scenario.RunTool(b.Name, string(b.Input)), false))
			}
		}
		if len(results) == 0 {
			return nil
		}
		messages = append(messages, msg.ToParam(), anthropic.NewUserMessage(results...))
	}
	tr.Add("no final answer after 3 turns")
	return nil
}
