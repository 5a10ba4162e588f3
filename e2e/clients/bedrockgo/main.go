// Command bedrockgo is the end-to-end client for
// github.com/aws/aws-sdk-go-v2/service/bedrockruntime: `bedrockgo
// plain|stream|tool|default|invoke|invoke-stream` (Converse, ConverseStream,
// a Converse tool round trip, Converse without inferenceConfig, InvokeModel
// and InvokeModelWithResponseStream with Anthropic's Messages body). The SDK reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME and
// its credentials and region from the environment (config.LoadDefaultConfig)
// and signs every request with SigV4; every call is attributed with
// traceforge.SourceTransport.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/e2e/internal/scenario"
	"github.com/traceforge/traceforge/e2e/internal/wiretap"
)

const (
	name  = "bedrockgo"
	model = "anthropic.claude-3-haiku-20240307-v1:0"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithHTTPClient(traceforge.NewHTTPClient(&http.Client{Transport: wiretap.Transport(nil)})))
	if err != nil {
		scenario.Fail(name, err)
	}
	scenario.RunModes(name, bedrockruntime.NewFromConfig(cfg), map[string]func(context.Context, *bedrockruntime.Client, *scenario.Transcript) error{
		"plain": plain, "stream": stream, "tool": agent, "default": defaultCall, "invoke": invokeModel, "invoke-stream": invokeStream})
}

func inference() *types.InferenceConfiguration {
	return &types.InferenceConfiguration{Temperature: aws.Float32(0), MaxTokens: aws.Int32(scenario.MaxTokens)}
}

func userText(s string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: s}}}
}

// describe adds an answer's text, tool calls, stop reason and token count,
// and returns its tool calls.
func describe(tr *scenario.Transcript, prefix string, out *bedrockruntime.ConverseOutput) ([]types.ToolUseBlock, *types.Message, error) {
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, nil, fmt.Errorf("no message in the answer")
	}
	var text strings.Builder
	var calls []types.ToolUseBlock
	for _, b := range msg.Value.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberText:
			text.WriteString(v.Value)
		case *types.ContentBlockMemberToolUse:
			var args map[string]any
			if err := v.Value.Input.UnmarshalSmithyDocument(&args); err != nil {
				return nil, nil, err
			}
			a, _ := json.Marshal(args)
			tr.Add("%stool_use: %s %s", prefix, aws.ToString(v.Value.Name), a)
			calls = append(calls, v.Value)
		}
	}
	tr.Add("%stext: %q", prefix, text.String())
	tr.Add("%sstop_reason: %s", prefix, out.StopReason)
	tr.Add("%stokens: %d", prefix, aws.ToInt32(out.Usage.TotalTokens))
	return calls, &msg.Value, nil
}

func plain(ctx context.Context, client *bedrockruntime.Client, tr *scenario.Transcript) error {
	out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: []types.Message{userText(scenario.Prompt("plain"))}, InferenceConfig: inference()})
	if err != nil {
		return err
	}
	_, _, err = describe(tr, "", out)
	return err
}

// defaultCall is the SDK's default Converse call: no inferenceConfig at
// all (traceforge init's request defaults fill it in).
func defaultCall(ctx context.Context, client *bedrockruntime.Client, tr *scenario.Transcript) error {
	out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: []types.Message{userText(scenario.Prompt("default"))}})
	if err != nil {
		return err
	}
	_, _, err = describe(tr, "", out)
	return err
}

func stream(ctx context.Context, client *bedrockruntime.Client, tr *scenario.Transcript) error {
	out, err := client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model), Messages: []types.Message{userText(scenario.Prompt("stream"))}, InferenceConfig: inference()})
	if err != nil {
		return err
	}
	s := out.GetStream()
	defer s.Close()
	var text strings.Builder
	for ev := range s.Events() {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			if d, ok := v.Value.Delta.(*types.ContentBlockDeltaMemberText); ok {
				text.WriteString(d.Value)
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			tr.Add("stop_reason: %s", v.Value.StopReason)
		case *types.ConverseStreamOutputMemberMetadata:
			tr.Add("tokens: %d", aws.ToInt32(v.Value.Usage.TotalTokens))
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	tr.Add("streamed text: %q", text.String())
	return nil
}

// agent runs a tool loop: the model asks for get_weather, the client runs
// it and sends the result back as a toolResult block.
func agent(ctx context.Context, client *bedrockruntime.Client, tr *scenario.Transcript) error {
	tools := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name:        aws.String(scenario.ToolName),
		Description: aws.String(scenario.ToolDescription),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(scenario.ToolSchema())},
	}}}}
	msgs := []types.Message{userText(scenario.Prompt("tool"))}
	for turn := 1; turn <= 3; turn++ {
		out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msgs, InferenceConfig: inference(), ToolConfig: tools})
		if err != nil {
			return err
		}
		calls, msg, err := describe(tr, fmt.Sprintf("turn %d: ", turn), out)
		if err != nil || len(calls) == 0 {
			return err
		}
		msgs = append(msgs, *msg)
		var results []types.ContentBlock
		for _, c := range calls {
			args, _ := c.Input.MarshalSmithyDocument()
			var result map[string]any
			if err := json.Unmarshal([]byte(scenario.RunTool(aws.ToString(c.Name), string(args))), &result); err != nil {
				return err
			}
			results = append(results, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: c.ToolUseId,
				Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(result)}},
			}})
		}
		msgs = append(msgs, types.Message{Role: types.ConversationRoleUser, Content: results})
	}
	return fmt.Errorf("no final answer after 3 turns")
}

// anthropicBody is InvokeModel's body for an Anthropic model: Anthropic's
// Messages body with anthropic_version and without model (the path has it).
func anthropicBody(prompt string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"anthropic_version": "bedrock-2023-05-31",
		"max_tokens":        scenario.MaxTokens,
		"temperature":       0,
		"messages":          []map[string]any{{"role": "user", "content": prompt}},
	})
}

// invokeModel is InvokeModel with Anthropic's Messages body; the answer is
// Anthropic's message.
func invokeModel(ctx context.Context, client *bedrockruntime.Client, tr *scenario.Transcript) error {
	body, err := anthropicBody(scenario.Prompt("plain"))
	if err != nil {
		return err
	}
	out, err := client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(model), ContentType: aws.String("application/json"), Accept: aws.String("application/json"), Body: body})
	if err != nil {
		return err
	}
	var msg struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out.Body, &msg); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	tr.Add("content_type: %s", aws.ToString(out.ContentType))
	tr.Add("text: %q", text.String())
	tr.Add("stop_reason: %s", msg.StopReason)
	tr.Add("tokens: %d", msg.Usage.InputTokens+msg.Usage.OutputTokens)
	return nil
}

// invokeStream is InvokeModelWithResponseStream: every chunk is read, each
// one Anthropic stream event, and the text assembled from the deltas.
func invokeStream(ctx context.Context, client *bedrockruntime.Client, tr *scenario.Transcript) error {
	body, err := anthropicBody(scenario.Prompt("stream"))
	if err != nil {
		return err
	}
	out, err := client.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{ModelId: aws.String(model), ContentType: aws.String("application/json"), Accept: aws.String("application/json"), Body: body})
	if err != nil {
		return err
	}
	s := out.GetStream()
	defer s.Close()
	var text strings.Builder
	var kinds []string
	chunks, tokens := 0, 0
	for ev := range s.Events() {
		chunk, ok := ev.(*types.ResponseStreamMemberChunk)
		if !ok {
			return fmt.Errorf("unexpected stream member %T", ev)
		}
		chunks++
		var e struct {
			Type  string `json:"type"`
			Delta struct {
				Type       string `json:"type"`
				Text       string `json:"text"`
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
			Message struct {
				Usage struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(chunk.Value.Bytes, &e); err != nil {
			return fmt.Errorf("chunk %d: %w", chunks, err)
		}
		kinds = append(kinds, e.Type)
		switch e.Type {
		case "message_start":
			tokens += e.Message.Usage.InputTokens
		case "content_block_delta":
			if e.Delta.Type == "text_delta" {
				text.WriteString(e.Delta.Text)
			}
		case "message_delta":
			tr.Add("stop_reason: %s", e.Delta.StopReason)
			tokens += e.Usage.OutputTokens
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	tr.Add("chunks: %d (%s)", chunks, strings.Join(kinds, " "))
	tr.Add("tokens: %d", tokens)
	tr.Add("streamed text: %q", text.String())
	return nil
}
