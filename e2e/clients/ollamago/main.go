// Command ollamago is the end-to-end client for github.com/ollama/ollama/api:
// `ollamago chat|stream|generate|tool|embed`. The client is built on the
// OLLAMA_HOST the Ollama CLI and api.ClientFromEnvironment read
// (envconfig.Host: host:port or a URL), with traceforge.SourceTransport's
// HTTP client attributing every call.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const (
	name       = "ollamago"
	model      = "llama3.2"
	embedModel = "nomic-embed-text"
)

var modes = []string{"chat", "stream", "generate", "tool", "embed", "default"}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n", name, strings.Join(modes, "|"))
		os.Exit(2)
	}
	client := api.NewClient(envconfig.Host(), traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)}))
	run := map[string]func(context.Context, *api.Client, *scenario.Transcript) error{
		"chat": chat, "stream": stream, "generate": generate, "tool": agent, "embed": embed, "default": defaultCall,
	}[os.Args[1]]
	if run == nil {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n", name, strings.Join(modes, "|"))
		os.Exit(2)
	}
	tr := scenario.New(name, os.Args[1])
	if err := run(context.Background(), client, tr); err != nil {
		scenario.Fail(name, err)
	}
	tr.Print(os.Stdout)
}

func options() map[string]any {
	return map[string]any{"temperature": 0, "seed": scenario.Seed, "num_predict": scenario.MaxTokens}
}

func describe(tr *scenario.Transcript, prefix, text string, final api.ChatResponse, calls []api.ToolCall) {
	for _, c := range calls {
		args, _ := json.Marshal(c.Function.Arguments)
		tr.Add("%stool_call: %s %s", prefix, c.Function.Name, args)
	}
	tr.Add("%scontent: %q", prefix, text)
	tr.Add("%sdone_reason: %s", prefix, final.DoneReason)
	tr.Add("%stokens: %d", prefix, final.PromptEvalCount+final.EvalCount)
}

// chat is one unstreamed call ("stream": false).
func chat(ctx context.Context, client *api.Client, tr *scenario.Transcript) error {
	off := false
	req := &api.ChatRequest{Model: model, Stream: &off, Options: options(),
		Messages: []api.Message{{Role: "user", Content: scenario.Prompt("plain")}}}
	var final api.ChatResponse
	n := 0
	err := client.Chat(ctx, req, func(r api.ChatResponse) error { final = r; n++; return nil })
	if err != nil {
		return err
	}
	tr.Add("responses: %d", n)
	describe(tr, "", final.Message.Content, final, final.Message.ToolCalls)
	return nil
}

// defaultCall is the package's default call: model and messages, no
// options, streamed (Ollama's default; traceforge init's request defaults
// fill the options in).
func defaultCall(ctx context.Context, client *api.Client, tr *scenario.Transcript) error {
	req := &api.ChatRequest{Model: model, Messages: []api.Message{{Role: "user", Content: scenario.Prompt("default")}}}
	var text strings.Builder
	var final api.ChatResponse
	err := client.Chat(ctx, req, func(r api.ChatResponse) error { text.WriteString(r.Message.Content); final = r; return nil })
	if err != nil {
		return err
	}
	describe(tr, "", text.String(), final, nil)
	return nil
}

// stream is one call streamed as NDJSON (Ollama's default).
func stream(ctx context.Context, client *api.Client, tr *scenario.Transcript) error {
	req := &api.ChatRequest{Model: model, Options: options(),
		Messages: []api.Message{{Role: "user", Content: scenario.Prompt("stream")}}}
	var text strings.Builder
	var final api.ChatResponse
	err := client.Chat(ctx, req, func(r api.ChatResponse) error { text.WriteString(r.Message.Content); final = r; return nil })
	if err != nil {
		return err
	}
	describe(tr, "", text.String(), final, nil)
	return nil
}

// generate is one streamed /api/generate call.
func generate(ctx context.Context, client *api.Client, tr *scenario.Transcript) error {
	var text strings.Builder
	var final api.GenerateResponse
	err := client.Generate(ctx, &api.GenerateRequest{Model: model, Prompt: scenario.Prompt("generate"), Options: options()},
		func(r api.GenerateResponse) error { text.WriteString(r.Response); final = r; return nil })
	if err != nil {
		return err
	}
	tr.Add("response: %q", text.String())
	tr.Add("done_reason: %s", final.DoneReason)
	tr.Add("tokens: %d", final.PromptEvalCount+final.EvalCount)
	return nil
}

// agent runs a streamed tool loop: get_weather is asked for, run, and its
// result sent back as a tool message.
func agent(ctx context.Context, client *api.Client, tr *scenario.Transcript) error {
	var tools api.Tools
	schema, _ := json.Marshal(scenario.ToolSchema())
	spec := fmt.Sprintf(`[{"type":"function","function":{"name":%q,"description":%q,"parameters":%s}}]`, scenario.ToolName, scenario.ToolDescription, schema)
	if err := json.Unmarshal([]byte(spec), &tools); err != nil {
		return err
	}
	messages := []api.Message{{Role: "user", Content: scenario.Prompt("tool")}}
	for turn := 1; turn <= 3; turn++ {
		var text strings.Builder
		var final api.ChatResponse
		var calls []api.ToolCall
		err := client.Chat(ctx, &api.ChatRequest{Model: model, Messages: messages, Tools: tools, Options: options()},
			func(r api.ChatResponse) error {
				text.WriteString(r.Message.Content)
				calls = append(calls, r.Message.ToolCalls...)
				final = r
				return nil
			})
		if err != nil {
			return err
		}
		describe(tr, fmt.Sprintf("turn %d: ", turn), text.String(), final, calls)
		if len(calls) == 0 {
			return nil
		}
		messages = append(messages, api.Message{Role: "assistant", Content: text.String(), ToolCalls: calls})
		for _, c := range calls {
			args, _ := json.Marshal(c.Function.Arguments)
			messages = append(messages, api.Message{Role: "tool", Content: scenario.RunTool(c.Function.Name, string(args)), ToolName: c.Function.Name})
		}
	}
	return fmt.Errorf("no final answer after 3 turns")
}

func embed(ctx context.Context, client *api.Client, tr *scenario.Transcript) error {
	r, err := client.Embed(ctx, &api.EmbedRequest{Model: embedModel, Input: []string{scenario.Prompt("embed"), "Grace Hopper"}})
	if err != nil {
		return err
	}
	for i, e := range r.Embeddings {
		tr.Add("embedding %d: %d values, first %.6f", i, len(e), e[0])
	}
	tr.Add("prompt_eval_count: %d", r.PromptEvalCount)
	return nil
}
