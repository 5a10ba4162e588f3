// Command openairesp is the end-to-end client for the OpenAI Responses API
// and embeddings through github.com/openai/openai-go/v3:
// `openairesp plain|stream|tool|chain|rag|default|around`. around makes the
// calls around the LLM call (DESIGN §13.4): it counts a prompt's tokens,
// uploads a file, starts a background response and polls it until it is
// completed. It reads OPENAI_BASE_URL and
// OPENAI_API_KEY (the SDK does), attributes every call with
// traceforge.SourceTransport and prints what it saw, without per-call ids.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const name = "openairesp"

func main() {
	client := openai.NewClient(option.WithHTTPClient(traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)})))
	scenario.RunModes(name, client, map[string]func(context.Context, openai.Client, *scenario.Transcript) error{
		"plain": plain, "stream": stream, "tool": agent, "chain": chain, "rag": rag, "default": defaultCall, "around": around,
	})
}

func params(input responses.ResponseNewParamsInputUnion) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:           openai.ChatModel(scenario.OpenAIModel),
		Input:           input,
		Temperature:     openai.Float(0),
		MaxOutputTokens: openai.Int(scenario.MaxTokens),
	}
}

func text(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

func report(tr *scenario.Transcript, prefix string, r *responses.Response) {
	tr.Add("%scontent: %q", prefix, r.OutputText())
	tr.Add("%sstatus: %s", prefix, r.Status)
	tr.Add("%stokens: %d", prefix, r.Usage.TotalTokens)
}

// defaultCall is the SDK's default call: model and input only, no
// temperature or max_output_tokens (traceforge init's request defaults
// fill them in).
func defaultCall(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: openai.ChatModel(scenario.OpenAIModel), Input: text(scenario.Prompt("default"))})
	if err != nil {
		return err
	}
	report(tr, "", resp)
	return nil
}

// around counts the prompt's tokens, uploads a file, then starts a
// background response and polls it (at most 10 times) until it is
// completed: every one of these calls is an exchange, replayed in order.
func around(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	prompt := scenario.Prompt("plain")
	count, err := client.Responses.InputTokens.Count(ctx, responses.InputTokenCountParams{
		Model: openai.String(scenario.OpenAIModel), Input: responses.InputTokenCountParamsInputUnion{OfString: openai.String(prompt)}})
	if err != nil {
		return err
	}
	tr.Add("input_tokens: %d", count.InputTokens)
	f, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader("traceforge records LLM calls"), "notes.txt", "text/plain"), Purpose: openai.FilePurposeUserData})
	if err != nil {
		return err
	}
	tr.Add("file: %s %d bytes %s", f.Filename, f.Bytes, f.Status)
	p := params(text(prompt))
	p.Background = openai.Bool(true)
	resp, err := client.Responses.New(ctx, p)
	if err != nil {
		return err
	}
	statuses := []string{string(resp.Status)}
	for i := 0; i < 10 && resp.Status != "completed"; i++ {
		if resp, err = client.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{}); err != nil {
			return err
		}
		statuses = append(statuses, string(resp.Status))
	}
	tr.Add("statuses: %s", strings.Join(statuses, ","))
	report(tr, "", resp)
	return nil
}

func plain(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	resp, err := client.Responses.New(ctx, params(text(scenario.Prompt("plain"))))
	if err != nil {
		return err
	}
	report(tr, "", resp)
	return nil
}

// stream reads the typed events the way SDK helpers do: text deltas as
// they come, the final response from response.completed.
func stream(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	s := client.Responses.NewStreaming(ctx, params(text(scenario.Prompt("stream"))))
	defer s.Close()
	var deltas strings.Builder
	var final *responses.Response
	var seq []int64
	for s.Next() {
		ev := s.Current()
		seq = append(seq, ev.SequenceNumber)
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			final = &r
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	if final == nil {
		return fmt.Errorf("no response.completed event")
	}
	for i, n := range seq {
		if n != int64(i) {
			return fmt.Errorf("event %d has sequence_number %d", i, n)
		}
	}
	tr.Add("deltas: %q", deltas.String())
	report(tr, "", final)
	return nil
}

// agent runs a function-tool round trip: the model calls get_weather, the
// client sends the call and its output back as input items.
func agent(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(scenario.Prompt("tool"), responses.EasyInputMessageRoleUser)}
	tools := []responses.ToolUnionParam{responses.ToolParamOfFunction(scenario.ToolName, scenario.ToolSchema(), false)}
	for turn := 1; turn <= 3; turn++ {
		p := params(responses.ResponseNewParamsInputUnion{OfInputItemList: input})
		p.Tools = tools
		resp, err := client.Responses.New(ctx, p)
		if err != nil {
			return err
		}
		var calls []responses.ResponseFunctionToolCall
		for _, item := range resp.Output {
			if item.Type == "function_call" {
				calls = append(calls, item.AsFunctionCall())
			}
		}
		tr.Add("turn %d: status: %s, tokens: %d", turn, resp.Status, resp.Usage.TotalTokens)
		if len(calls) == 0 {
			tr.Add("turn %d: content: %q", turn, resp.OutputText())
			return nil
		}
		for _, c := range calls {
			tr.Add("turn %d: function_call: %s %s", turn, c.Name, c.Arguments)
			fc := c.ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
			out := responses.ResponseInputItemParamOfFunctionCallOutput(scenario.RunTool(c.Name, c.Arguments))
			out.OfFunctionCallOutput.CallID = openai.String(c.CallID)
			input = append(input, out)
		}
	}
	tr.Add("no final answer after 3 turns")
	return nil
}

// chain continues a conversation with previous_response_id, streamed.
func chain(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	first, err := client.Responses.New(ctx, params(text(scenario.Prompt("chain"))))
	if err != nil {
		return err
	}
	report(tr, "first: ", first)
	p := params(text("Now say it in French."))
	p.PreviousResponseID = openai.String(first.ID)
	s := client.Responses.NewStreaming(ctx, p)
	defer s.Close()
	var final *responses.Response
	for s.Next() {
		if ev := s.Current(); ev.Type == "response.completed" {
			r := ev.Response
			final = &r
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	if final == nil {
		return fmt.Errorf("no response.completed event")
	}
	tr.Add("second: previous is first: %v", final.PreviousResponseID == first.ID)
	report(tr, "second: ", final)
	return nil
}

// rag embeds the question (base64, as the openai npm package asks by
// default), then answers it with chat completions.
func rag(ctx context.Context, client openai.Client, tr *scenario.Transcript) error {
	q := scenario.Prompt("rag")
	ep := openai.EmbeddingNewParams{
		Model:          openai.EmbeddingModelTextEmbedding3Small,
		Input:          openai.EmbeddingNewParamsInputUnion{OfString: openai.String(q)},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64,
	}
	emb, err := client.Embeddings.New(ctx, ep)
	if err != nil {
		return err
	}
	var vec string
	if len(emb.Data) != 1 || json.Unmarshal([]byte(emb.Data[0].JSON.Embedding.Raw()), &vec) != nil {
		return fmt.Errorf("want one base64 embedding, got %d", len(emb.Data))
	}
	raw, err := base64.StdEncoding.DecodeString(vec)
	if err != nil {
		return err
	}
	tr.Add("embedding: %d bytes, base64 %s…, tokens: %d", len(raw), vec[:16], emb.Usage.TotalTokens)
	cp := openai.ChatCompletionNewParams{
		Model:       openai.ChatModel(scenario.OpenAIModel),
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Context: traceforge snapshots LLM calls."), openai.UserMessage(q)},
		Temperature: openai.Float(0),
		Seed:        openai.Int(scenario.Seed),
		MaxTokens:   openai.Int(scenario.MaxTokens),
	}
	resp, err := client.Chat.Completions.New(ctx, cp)
	if err != nil {
		return err
	}
	tr.Add("answer: %q", resp.Choices[0].Message.Content)
	tr.Add("tokens: %d", resp.Usage.TotalTokens)
	return nil
}
