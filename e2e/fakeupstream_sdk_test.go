package e2e

// Faithfulness of the fake upstream's newer wire formats (OpenAI Responses
// and embeddings, Gemini, Ollama native), checked with the real Go SDKs
// pointed straight at it. Each check takes only a base URL
// (http://127.0.0.1:PORT), so that the same checks can run through
// traceforge's proxy once it serves these formats.

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/internal/fakeupstream"
)

// sdkCheck is one SDK scenario against a base URL.
type sdkCheck struct {
	name string
	run  func(t *testing.T, base string)
}

// sdkChecks are the scenarios, in the order they run.
var sdkChecks = []sdkCheck{
	{"openai-go/responses/plain", responsesPlain},
	{"openai-go/responses/stream", responsesStream},
	{"openai-go/responses/tool-chain", responsesToolChain},
	{"openai-go/embeddings", openAIEmbeddings},
	{"genai/generate", genaiGenerate},
	{"genai/stream", genaiStream},
	{"genai/tool-thinking", genaiToolThinking},
	{"genai/embed", genaiEmbed},
	{"ollama/chat", ollamaChat},
	{"ollama/tool", ollamaTool},
	{"ollama/generate", ollamaGenerate},
	{"ollama/embed", ollamaEmbed},
}

func TestFakeUpstreamSDKs(t *testing.T) {
	srv, err := fakeupstream.Start(fakeupstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, c := range sdkChecks {
		t.Run(c.name, func(t *testing.T) { c.run(t, srv.URL) })
	}
}

// With minted ids (as the real API: every call a new id) a Responses chain
// still works through the SDK.
func TestFakeUpstreamSDKsMintedIDs(t *testing.T) {
	srv, err := fakeupstream.Start(fakeupstream.Options{MintIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	responsesToolChain(t, srv.URL)
	client := openAIClient(srv.URL)
	first, err1 := client.Responses.New(context.Background(), responsesParams("plain"))
	second, err2 := client.Responses.New(context.Background(), responsesParams("plain"))
	if err1 != nil || err2 != nil || first.ID == second.ID || first.OutputText() != second.OutputText() {
		t.Fatalf("ids %q %q (%v %v)", first.ID, second.ID, err1, err2)
	}
}

func echo(mode string) string { return "Echo: " + scenario.Prompt(mode) }

func words(s string) int64 { return int64(len(strings.Fields(s))) }

// ---- OpenAI Responses and embeddings (openai-go) ----

func openAIClient(base string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-fake"), option.WithMaxRetries(0))
}

func responsesParams(mode string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:           openai.ChatModel(scenario.OpenAIModel),
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String(scenario.Prompt(mode))},
		Temperature:     openai.Float(0),
		MaxOutputTokens: openai.Int(scenario.MaxTokens),
	}
}

func responsesPlain(t *testing.T, base string) {
	client := openAIClient(base)
	resp, err := client.Responses.New(context.Background(), responsesParams("plain"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != echo("plain") || resp.Status != responses.ResponseStatusCompleted || !strings.HasPrefix(resp.ID, "resp_") {
		t.Fatalf("text %q status %q id %q", resp.OutputText(), resp.Status, resp.ID)
	}
	if resp.Usage.OutputTokens != words(echo("plain")) || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
		t.Fatalf("usage %+v", resp.Usage)
	}
	again, err := client.Responses.New(context.Background(), responsesParams("plain"))
	if err != nil || again.ID != resp.ID {
		t.Fatalf("same request: id %q then %q (%v)", resp.ID, again.ID, err)
	}
	got, err := client.Responses.Get(context.Background(), resp.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != resp.OutputText() {
		t.Fatalf("Get: %v", err)
	}
	if err := client.Responses.Delete(context.Background(), resp.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := client.Responses.Get(context.Background(), resp.ID, responses.ResponseGetParams{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("Get after Delete: %v", err)
	}
}

func responsesStream(t *testing.T, base string) {
	client := openAIClient(base)
	s := client.Responses.NewStreaming(context.Background(), responsesParams("stream"))
	defer s.Close()
	var acc responses.ResponseAccumulator
	var deltas strings.Builder
	var final *responses.Response
	var types []string
	for s.Next() {
		ev := s.Current()
		types = append(types, ev.Type)
		if ev.Type == "response.output_text.delta" {
			deltas.WriteString(ev.Delta)
		}
		if ev.Type == "response.completed" {
			r := ev.Response
			final = &r
		}
		var sev responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(ev.RawJSON()), &sev); err != nil {
			t.Fatalf("event %s: %v", ev.Type, err)
		}
		if err := acc.AddEvent(sev); err != nil {
			t.Fatalf("accumulator: %v", err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if final == nil || types[0] != "response.created" || types[1] != "response.in_progress" {
		t.Fatalf("events %v", types)
	}
	rebuilt, err := acc.ReconstructedResponse()
	if err != nil {
		t.Fatal(err)
	}
	want := echo("stream")
	if deltas.String() != want || final.OutputText() != want || acc.Snapshot().OutputText() != want || rebuilt.OutputText() != want {
		t.Fatalf("deltas %q final %q accumulated %q", deltas.String(), final.OutputText(), acc.Snapshot().OutputText())
	}
	if final.Usage.OutputTokens != words(want) {
		t.Fatalf("usage %+v", final.Usage)
	}
}

// responsesToolChain: the model calls get_weather; the result goes back as a
// function_call_output item chained with previous_response_id.
func responsesToolChain(t *testing.T, base string) {
	client := openAIClient(base)
	ctx := context.Background()
	p := responsesParams("tool")
	p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction(scenario.ToolName, scenario.ToolSchema(), true)}
	first, err := client.Responses.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var call *responses.ResponseFunctionToolCall
	for _, item := range first.Output {
		if item.Type == "function_call" {
			fc := item.AsFunctionCall()
			call = &fc
		}
	}
	if call == nil || call.Name != scenario.ToolName || call.Arguments != `{"city":"Paris"}` || !strings.HasPrefix(call.CallID, "call_") {
		t.Fatalf("output %+v", first.Output)
	}
	result := scenario.RunTool(call.Name, call.Arguments)

	// The same call streamed: arguments arrive as deltas.
	s := client.Responses.NewStreaming(ctx, p)
	var args strings.Builder
	for s.Next() {
		if ev := s.Current(); ev.Type == "response.function_call_arguments.delta" {
			args.WriteString(ev.Delta)
		}
	}
	s.Close()
	if s.Err() != nil || args.String() != call.Arguments {
		t.Fatalf("streamed arguments %q (%v)", args.String(), s.Err())
	}

	output := responses.ResponseInputItemParamOfFunctionCallOutput(result)
	output.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	follow := responses.ResponseNewParams{
		Model:              openai.ChatModel(scenario.OpenAIModel),
		PreviousResponseID: openai.String(first.ID),
		Tools:              p.Tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			output,
		}},
	}
	second, err := client.Responses.New(ctx, follow)
	if err != nil {
		t.Fatal(err)
	}
	if second.OutputText() != "The tool returned: "+result || second.PreviousResponseID != first.ID {
		t.Fatalf("second turn %q (previous %q)", second.OutputText(), second.PreviousResponseID)
	}
	// The chained turn counts its parent's tokens as input.
	if second.Usage.InputTokens <= first.Usage.TotalTokens {
		t.Fatalf("chained input tokens %d, parent total %d", second.Usage.InputTokens, first.Usage.TotalTokens)
	}
}

func openAIEmbeddings(t *testing.T, base string) {
	client := openAIClient(base)
	ctx := context.Background()
	params := openai.EmbeddingNewParams{
		Model: openai.EmbeddingModelTextEmbedding3Small,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"Ada Lovelace", "Grace Hopper"}},
	}
	resp, err := client.Embeddings.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 2 || len(resp.Data[0].Embedding) != 1536 || resp.Usage.PromptTokens != 4 || resp.Usage.TotalTokens != 4 {
		t.Fatalf("%d embeddings, usage %+v", len(resp.Data), resp.Usage)
	}
	params.EncodingFormat = openai.EmbeddingNewParamsEncodingFormatBase64
	b64, err := client.Embeddings.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal([]byte(b64.Data[1].JSON.Embedding.Raw()), &s); err != nil {
		t.Fatalf("base64 embedding is not a string: %v", err)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw) != 4*1536 {
		t.Fatalf("base64: %v, %d bytes", err, len(raw))
	}
	for i, f := range resp.Data[1].Embedding {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != float32(f) {
			t.Fatalf("value %d: base64 %v, float %v", i, got, f)
		}
	}
	params.EncodingFormat = ""
	params.Dimensions = openai.Int(256)
	short, err := client.Embeddings.New(ctx, params)
	if err != nil || len(short.Data[0].Embedding) != 256 {
		t.Fatalf("dimensions: %v", err)
	}
}

// ---- Gemini (google.golang.org/genai) ----

const geminiModel = "gemini-2.5-flash"

func genaiClient(t *testing.T, base string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "AIza-fake",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: base},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func genaiConfig() *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{
		Temperature:     genai.Ptr[float32](0),
		Seed:            genai.Ptr[int32](scenario.Seed),
		MaxOutputTokens: scenario.MaxTokens,
	}
}

func genaiGenerate(t *testing.T, base string) {
	c := genaiClient(t, base)
	resp, err := c.Models.GenerateContent(context.Background(), geminiModel, genai.Text(scenario.Prompt("plain")), genaiConfig())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != echo("plain") || resp.Candidates[0].FinishReason != genai.FinishReasonStop || resp.ModelVersion != geminiModel || resp.ResponseID == "" {
		t.Fatalf("%q %q %q", resp.Text(), resp.Candidates[0].FinishReason, resp.ModelVersion)
	}
	u := resp.UsageMetadata
	if u.CandidatesTokenCount != int32(words(echo("plain"))) || u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount {
		t.Fatalf("usage %+v", u)
	}
}

func genaiStream(t *testing.T, base string) {
	c := genaiClient(t, base)
	var text strings.Builder
	var last *genai.GenerateContentResponse
	chunks := 0
	for resp, err := range c.Models.GenerateContentStream(context.Background(), geminiModel, genai.Text(scenario.Prompt("stream")), genaiConfig()) {
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		text.WriteString(resp.Text())
		last = resp
	}
	if chunks < 2 || text.String() != echo("stream") {
		t.Fatalf("%d chunks, text %q", chunks, text.String())
	}
	if last.Candidates[0].FinishReason != genai.FinishReasonStop || last.UsageMetadata.CandidatesTokenCount != int32(words(echo("stream"))) {
		t.Fatalf("last chunk %+v", last.Candidates[0])
	}
}

func genaiToolThinking(t *testing.T, base string) {
	c := genaiClient(t, base)
	ctx := context.Background()
	cfg := genaiConfig()
	cfg.Tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name:        scenario.ToolName,
		Description: scenario.ToolDescription,
		Parameters: &genai.Schema{
			Type:       genai.TypeObject,
			Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}},
			Required:   []string{"city"},
		},
	}}}}
	cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	contents := genai.Text(scenario.Prompt("tool"))
	resp, err := c.Models.GenerateContent(ctx, geminiModel, contents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	parts := resp.Candidates[0].Content.Parts
	calls := resp.FunctionCalls()
	if len(parts) != 2 || !parts[0].Thought || len(calls) != 1 || calls[0].Name != scenario.ToolName || calls[0].Args["city"] != "Paris" ||
		len(parts[1].ThoughtSignature) == 0 || resp.UsageMetadata.ThoughtsTokenCount == 0 {
		t.Fatalf("parts %+v usage %+v", parts, resp.UsageMetadata)
	}
	args, _ := json.Marshal(calls[0].Args)
	result := scenario.RunTool(calls[0].Name, string(args))
	var response map[string]any
	if err := json.Unmarshal([]byte(result), &response); err != nil {
		t.Fatal(err)
	}
	contents = append(contents, resp.Candidates[0].Content,
		genai.NewContentFromFunctionResponse(calls[0].Name, response, genai.RoleUser))
	resp, err = c.Models.GenerateContent(ctx, geminiModel, contents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(response)
	if resp.Text() != "The tool returned: "+string(compact) {
		t.Fatalf("after the tool: %q", resp.Text())
	}
}

func genaiEmbed(t *testing.T, base string) {
	c := genaiClient(t, base)
	resp, err := c.Models.EmbedContent(context.Background(), "gemini-embedding-001",
		[]*genai.Content{genai.NewContentFromText("Ada Lovelace", genai.RoleUser), genai.NewContentFromText("Grace Hopper", genai.RoleUser)},
		&genai.EmbedContentConfig{OutputDimensionality: genai.Ptr[int32](64)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Embeddings) != 2 || len(resp.Embeddings[0].Values) != 64 || resp.Embeddings[0].Values[0] == resp.Embeddings[1].Values[0] {
		t.Fatalf("%d embeddings", len(resp.Embeddings))
	}
	// A missing key is refused in Google's error shape.
	bad, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: " ", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: base}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Models.GenerateContent(context.Background(), geminiModel, genai.Text("x"), nil)
	var apiErr genai.APIError
	if !asAPIError(err, &apiErr) || apiErr.Code != http.StatusForbidden || apiErr.Status != "PERMISSION_DENIED" {
		t.Fatalf("missing key: %v", err)
	}
}

func asAPIError(err error, target *genai.APIError) bool {
	if e, ok := err.(genai.APIError); ok {
		*target = e
		return true
	}
	return false
}

// ---- Ollama native (github.com/ollama/ollama/api) ----

const ollamaModelName = "llama3.2"

func ollamaClient(t *testing.T, base string) *api.Client {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return api.NewClient(u, http.DefaultClient)
}

func ollamaOptions() map[string]any {
	return map[string]any{"temperature": 0, "seed": scenario.Seed, "num_predict": scenario.MaxTokens}
}

func ollamaChat(t *testing.T, base string) {
	c := ollamaClient(t, base)
	for _, streamed := range []bool{true, false} {
		req := &api.ChatRequest{
			Model:    ollamaModelName,
			Messages: []api.Message{{Role: "user", Content: scenario.Prompt("stream")}},
			Options:  ollamaOptions(),
		}
		if !streamed {
			req.Stream = new(bool)
		}
		var text strings.Builder
		var final api.ChatResponse
		n := 0
		err := c.Chat(context.Background(), req, func(r api.ChatResponse) error {
			n++
			text.WriteString(r.Message.Content)
			final = r
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if text.String() != echo("stream") || !final.Done || final.DoneReason != "stop" ||
			final.EvalCount != int(words(echo("stream"))) || final.PromptEvalCount == 0 || (streamed != (n > 1)) {
			t.Fatalf("streamed=%v: %d responses, text %q, final %+v", streamed, n, text.String(), final)
		}
	}
}

func ollamaTool(t *testing.T, base string) {
	c := ollamaClient(t, base)
	var tools api.Tools
	schema, _ := json.Marshal(scenario.ToolSchema())
	if err := json.Unmarshal([]byte(fmt.Sprintf(`[{"type":"function","function":{"name":%q,"description":%q,"parameters":%s}}]`,
		scenario.ToolName, scenario.ToolDescription, schema)), &tools); err != nil {
		t.Fatal(err)
	}
	messages := []api.Message{{Role: "user", Content: scenario.Prompt("tool")}}
	var got api.Message
	err := c.Chat(context.Background(), &api.ChatRequest{Model: ollamaModelName, Messages: messages, Tools: tools, Options: ollamaOptions()},
		func(r api.ChatResponse) error {
			if len(r.Message.ToolCalls) > 0 {
				got = r.Message
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Function.Name != scenario.ToolName {
		t.Fatalf("tool calls %+v", got.ToolCalls)
	}
	args, _ := json.Marshal(got.ToolCalls[0].Function.Arguments)
	if string(args) != `{"city":"Paris"}` {
		t.Fatalf("arguments %s", args)
	}
	result := scenario.RunTool(scenario.ToolName, string(args))
	messages = append(messages, got, api.Message{Role: "tool", Content: result, ToolName: scenario.ToolName})
	var answer strings.Builder
	err = c.Chat(context.Background(), &api.ChatRequest{Model: ollamaModelName, Messages: messages, Tools: tools, Options: ollamaOptions()},
		func(r api.ChatResponse) error { answer.WriteString(r.Message.Content); return nil })
	if err != nil || answer.String() != "The tool returned: "+result {
		t.Fatalf("after the tool: %q (%v)", answer.String(), err)
	}
}

func ollamaGenerate(t *testing.T, base string) {
	c := ollamaClient(t, base)
	var text strings.Builder
	var final api.GenerateResponse
	err := c.Generate(context.Background(), &api.GenerateRequest{Model: ollamaModelName, Prompt: scenario.Prompt("plain"), Options: ollamaOptions()},
		func(r api.GenerateResponse) error { text.WriteString(r.Response); final = r; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != echo("plain") || !final.Done || final.DoneReason != "stop" || len(final.Context) == 0 || final.EvalCount == 0 {
		t.Fatalf("text %q final %+v", text.String(), final)
	}
	// An error answers in Ollama's shape and reaches the SDK as a StatusError.
	err = c.Generate(context.Background(), &api.GenerateRequest{Prompt: "x"}, func(api.GenerateResponse) error { return nil })
	var se api.StatusError
	if e, ok := err.(api.StatusError); ok {
		se = e
	}
	if se.StatusCode != http.StatusBadRequest || se.ErrorMessage != "model is required" {
		t.Fatalf("missing model: %#v", err)
	}
}

func ollamaEmbed(t *testing.T, base string) {
	c := ollamaClient(t, base)
	resp, err := c.Embed(context.Background(), &api.EmbedRequest{Model: "nomic-embed-text", Input: []string{"Ada Lovelace", "Grace Hopper"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Embeddings) != 2 || len(resp.Embeddings[0]) != 768 || resp.PromptEvalCount != 4 || resp.Model != "nomic-embed-text" {
		t.Fatalf("%d embeddings, prompt_eval_count %d", len(resp.Embeddings), resp.PromptEvalCount)
	}
	var sum float64
	for _, v := range resp.Embeddings[0] {
		sum += float64(v) * float64(v)
	}
	if math.Abs(sum-1) > 1e-4 {
		t.Fatalf("not normalized: |v|² = %v", sum)
	}
}
