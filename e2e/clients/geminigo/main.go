// Command geminigo is the end-to-end client for google.golang.org/genai:
// `geminigo plain|stream|tool|embed`. The SDK reads GOOGLE_GEMINI_BASE_URL
// (without a version: it appends /v1beta/models/…) and GOOGLE_API_KEY or
// GEMINI_API_KEY; every call is attributed with traceforge.SourceTransport.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const (
	name       = "geminigo"
	model      = "gemini-2.5-flash"
	embedModel = "gemini-embedding-001"
)

var modes = []string{"plain", "stream", "tool", "embed", "default"}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n", name, strings.Join(modes, "|"))
		os.Exit(2)
	}
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI, HTTPClient: traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)})})
	if err != nil {
		scenario.Fail(name, err)
	}
	run := map[string]func(context.Context, *genai.Client, *scenario.Transcript) error{
		"plain": plain, "stream": stream, "tool": agent, "embed": embed, "default": defaultCall,
	}[os.Args[1]]
	if run == nil {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n", name, strings.Join(modes, "|"))
		os.Exit(2)
	}
	tr := scenario.New(name, os.Args[1])
	if err := run(ctx, client, tr); err != nil {
		scenario.Fail(name, err)
	}
	tr.Print(os.Stdout)
}

func config() *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{
		Temperature:     genai.Ptr[float32](0),
		Seed:            genai.Ptr[int32](scenario.Seed),
		MaxOutputTokens: scenario.MaxTokens,
	}
}

// describe adds an answer's text, function calls, finish reason and token
// count.
func describe(tr *scenario.Transcript, prefix string, r *genai.GenerateContentResponse) {
	for _, fc := range r.FunctionCalls() {
		args, _ := json.Marshal(fc.Args)
		tr.Add("%sfunction_call: %s %s", prefix, fc.Name, args)
	}
	tr.Add("%stext: %q", prefix, r.Text())
	tr.Add("%sfinish_reason: %s", prefix, r.Candidates[0].FinishReason)
	tr.Add("%stokens: %d", prefix, r.UsageMetadata.TotalTokenCount)
	tr.Add("%smodel: %s", prefix, r.ModelVersion)
}

// defaultCall is the SDK's default call: model and contents, no config
// (traceforge init's request defaults fill it in).
func defaultCall(ctx context.Context, client *genai.Client, tr *scenario.Transcript) error {
	r, err := client.Models.GenerateContent(ctx, model, genai.Text(scenario.Prompt("default")), nil)
	if err != nil {
		return err
	}
	describe(tr, "", r)
	return nil
}

func plain(ctx context.Context, client *genai.Client, tr *scenario.Transcript) error {
	r, err := client.Models.GenerateContent(ctx, model, genai.Text(scenario.Prompt("plain")), config())
	if err != nil {
		return err
	}
	describe(tr, "", r)
	return nil
}

func stream(ctx context.Context, client *genai.Client, tr *scenario.Transcript) error {
	var text strings.Builder
	var last *genai.GenerateContentResponse
	for r, err := range client.Models.GenerateContentStream(ctx, model, genai.Text(scenario.Prompt("stream")), config()) {
		if err != nil {
			return err
		}
		text.WriteString(r.Text())
		last = r
	}
	if last == nil {
		return fmt.Errorf("empty stream")
	}
	tr.Add("streamed text: %q", text.String())
	tr.Add("finish_reason: %s", last.Candidates[0].FinishReason)
	tr.Add("tokens: %d", last.UsageMetadata.TotalTokenCount)
	return nil
}

// agent runs a tool loop with thinking on: the model asks for get_weather
// (a functionCall part carrying a thoughtSignature), the client runs it and
// sends the model's content back with the functionResponse.
func agent(ctx context.Context, client *genai.Client, tr *scenario.Transcript) error {
	cfg := config()
	cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	cfg.Tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name:                 scenario.ToolName,
		Description:          scenario.ToolDescription,
		ParametersJsonSchema: scenario.ToolSchema(),
	}}}}
	contents := genai.Text(scenario.Prompt("tool"))
	for turn := 1; turn <= 3; turn++ {
		r, err := client.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return err
		}
		prefix := fmt.Sprintf("turn %d: ", turn)
		describe(tr, prefix, r)
		calls := r.FunctionCalls()
		if len(calls) == 0 {
			return nil
		}
		contents = append(contents, r.Candidates[0].Content)
		for _, fc := range calls {
			args, _ := json.Marshal(fc.Args)
			var result map[string]any
			if err := json.Unmarshal([]byte(scenario.RunTool(fc.Name, string(args))), &result); err != nil {
				return err
			}
			contents = append(contents, genai.NewContentFromFunctionResponse(fc.Name, result, genai.RoleUser))
		}
	}
	return fmt.Errorf("no final answer after 3 turns")
}

// embed sends two texts: the SDK posts them to :batchEmbedContents.
func embed(ctx context.Context, client *genai.Client, tr *scenario.Transcript) error {
	p := scenario.Prompt("embed")
	r, err := client.Models.EmbedContent(ctx, embedModel,
		[]*genai.Content{genai.NewContentFromText(p, genai.RoleUser), genai.NewContentFromText("Grace Hopper", genai.RoleUser)},
		&genai.EmbedContentConfig{OutputDimensionality: genai.Ptr[int32](8)})
	if err != nil {
		return err
	}
	for i, e := range r.Embeddings {
		tr.Add("embedding %d: %d values, first %.6f", i, len(e.Values), e.Values[0])
	}
	return nil
}
