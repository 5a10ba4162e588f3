package fakeupstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools               []functionTool             `json:"tools"`
	ToolChoice          json.RawMessage            `json:"tool_choice"`
	Stream              bool                       `json:"stream"`
	StreamOptions       map[string]json.RawMessage `json:"stream_options"`
	MaxTokens           *int                       `json:"max_tokens"`
	MaxCompletionTokens *int                       `json:"max_completion_tokens"`
}

// functionTool is a tool of an OpenAI chat (or Ollama chat) request.
type functionTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type completionRequest struct {
	Model         string                     `json:"model"`
	Prompt        json.RawMessage            `json:"prompt"`
	Stream        bool                       `json:"stream"`
	StreamOptions map[string]json.RawMessage `json:"stream_options"`
	MaxTokens     *int                       `json:"max_tokens"`
}

// decodeError answers 400 for a body that is JSON but of the wrong types.
func (c *call) decodeError(err error) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		c.fail(http.StatusBadRequest, "invalid_type",
			fmt.Sprintf("Invalid type for '%s': expected %s, but got %s.", te.Field, te.Type, te.Value), te.Field)
		return
	}
	c.fail(http.StatusBadRequest, "", "Invalid request body: "+err.Error(), "")
}

// decodeOpenAI decodes an OpenAI request body into req and requires its
// model (*model, a field of req); false when it answered 400.
func (c *call) decodeOpenAI(body []byte, req any, model *string) bool {
	if err := json.Unmarshal(body, req); err != nil {
		c.decodeError(err)
		return false
	}
	if *model == "" {
		c.fail(http.StatusBadRequest, "", "you must provide a model parameter", "model")
		return false
	}
	return true
}

// includeUsage reports whether stream_options.include_usage is true, or
// answers 400 and returns ok=false when it is present and rejected.
func (c *call) includeUsage(so map[string]json.RawMessage) (include, ok bool) {
	raw, present := so["include_usage"]
	if !present {
		return false, true
	}
	if c.opts.RejectIncludeUsage {
		c.fail(http.StatusBadRequest, "", "Unrecognized request argument supplied: stream_options.include_usage", "stream_options")
		return false, false
	}
	var b bool
	_ = json.Unmarshal(raw, &b)
	return b, true
}

func (c *call) model(req string) string { return req + c.opts.ModelSuffix }

// ---- wire types ----

type openAIUsage struct {
	PromptTokens            int                `json:"prompt_tokens"`
	CompletionTokens        int                `json:"completion_tokens"`
	TotalTokens             int                `json:"total_tokens"`
	PromptTokensDetails     *promptDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *completionDetails `json:"completion_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
	AudioTokens  int `json:"audio_tokens"`
}

type completionDetails struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

func chatUsage(a answer) *openAIUsage {
	return &openAIUsage{
		PromptTokens:            a.promptTokens,
		CompletionTokens:        a.completionTokens,
		TotalTokens:             a.promptTokens + a.completionTokens,
		PromptTokensDetails:     &promptDetails{},
		CompletionTokensDetails: &completionDetails{},
	}
}

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []chatChoice `json:"choices"`
	Usage             *openAIUsage `json:"usage"`
	ServiceTier       string       `json:"service_tier"`
	SystemFingerprint string       `json:"system_fingerprint"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type chatMessage struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"`
	Refusal     *string        `json:"refusal"`
	ToolCalls   []wireToolCall `json:"tool_calls,omitempty"`
	Annotations []any          `json:"annotations"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	ServiceTier       string          `json:"service_tier"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
	Obfuscation       string          `json:"obfuscation"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Refusal   json.RawMessage `json:"refusal,omitempty"`
	ToolCalls []wireToolCall  `json:"tool_calls,omitempty"`
}

var jsonNull = json.RawMessage("null")

func jsonString(s string) json.RawMessage { return marshal(s, "") }

// ---- chat completions ----

func (c *call) serveChat(body []byte) {
	var req chatRequest
	if !c.decodeOpenAI(body, &req, &req.Model) {
		return
	}
	if req.Messages == nil {
		c.fail(http.StatusBadRequest, "", "Missing required parameter: 'messages'.", "messages")
		return
	}
	include, ok := c.includeUsage(req.StreamOptions)
	if !ok {
		return
	}

	prompt := 0
	lastUser := ""
	for _, m := range req.Messages {
		t := contentText(m.Content, true)
		prompt += words(t)
		if m.Role == "user" {
			lastUser = t
		}
	}
	maxTokens := 0
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil {
		maxTokens = *req.MaxCompletionTokens
	}

	lastRole := ""
	if len(req.Messages) > 0 {
		lastRole = req.Messages[len(req.Messages)-1].Role
	}
	var results []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		results = append([]string{contentText(req.Messages[i].Content, true)}, results...)
	}
	a := c.reply(results, lastUser, len(req.Tools) > 0 && lastRole == "user",
		func() (string, json.RawMessage, bool) { return chooseOpenAITool(req) }, maxTokens)
	a.promptTokens = prompt

	finish := "stop"
	switch {
	case len(a.calls) > 0:
		finish = "tool_calls"
	case a.truncated:
		finish = "length"
	}
	id := fmt.Sprintf("chatcmpl-fake%08d", c.n)
	model := c.model(req.Model)

	if !req.Stream {
		msg := chatMessage{Role: "assistant", Annotations: []any{}}
		if len(a.calls) == 0 {
			msg.Content = &a.text
		}
		for _, tc := range a.calls {
			msg.ToolCalls = append(msg.ToolCalls, wireToolCall{
				ID: tc.id, Type: "function",
				Function: wireFunction{Name: tc.name, Arguments: tc.args},
			})
		}
		c.ok(chatCompletion{
			ID: id, Object: "chat.completion", Created: c.created(), Model: model,
			Choices:           []chatChoice{{Index: 0, Message: msg, FinishReason: finish}},
			Usage:             chatUsage(a),
			ServiceTier:       "default",
			SystemFingerprint: "fp_fake",
		}, "  ")
		return
	}

	s := c.newStream()
	seq := 0
	chunk := func(choices []chunkChoice, usage json.RawMessage) error {
		ch := chatChunk{
			ID: id, Object: "chat.completion.chunk", Created: c.created(), Model: model,
			ServiceTier: "default", SystemFingerprint: "fp_fake",
			Choices: choices, Usage: usage, Obfuscation: obfuscation(seq),
		}
		seq++
		return s.sendJSON("", ch)
	}
	var usageNull json.RawMessage
	if include {
		usageNull = jsonNull
	}
	delta := func(d chunkDelta) error {
		return chunk([]chunkChoice{{Index: 0, Delta: d}}, usageNull)
	}

	first := chunkDelta{Role: "assistant", Content: jsonString(""), Refusal: jsonNull}
	if len(a.calls) > 0 {
		first.Content = jsonNull
	}
	if delta(first) != nil {
		return
	}
	if len(a.calls) == 0 {
		for _, p := range textPieces(a.text) {
			if delta(chunkDelta{Content: jsonString(p)}) != nil {
				return
			}
		}
	}
	for i, tc := range a.calls {
		idx := i
		if delta(chunkDelta{ToolCalls: []wireToolCall{{
			Index: &idx, ID: tc.id, Type: "function",
			Function: wireFunction{Name: tc.name, Arguments: ""},
		}}}) != nil {
			return
		}
		for _, p := range bytePieces(tc.args, 6) {
			if delta(chunkDelta{ToolCalls: []wireToolCall{{
				Index: &idx, Function: wireFunction{Arguments: p},
			}}}) != nil {
				return
			}
		}
	}
	if chunk([]chunkChoice{{Index: 0, Delta: chunkDelta{}, FinishReason: &finish}}, usageNull) != nil {
		return
	}
	if include {
		if chunk([]chunkChoice{}, marshal(chatUsage(a), "")) != nil {
			return
		}
	}
	_ = s.send("", []byte("[DONE]"))
}

// chooseOpenAITool picks the tool to call, honouring tool_choice; use is
// false for tool_choice "none".
func chooseOpenAITool(req chatRequest) (name string, schema json.RawMessage, use bool) {
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) == nil && mode == "none" {
		return "", nil, false
	}
	var forced struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	want := ""
	if json.Unmarshal(req.ToolChoice, &forced) == nil {
		want = forced.Function.Name
	}
	for _, t := range req.Tools {
		if t.Function.Name == "" {
			continue
		}
		if want == "" || t.Function.Name == want {
			return t.Function.Name, t.Function.Parameters, true
		}
	}
	if t := req.Tools[0]; t.Function.Name != "" {
		return t.Function.Name, t.Function.Parameters, true
	}
	return "", nil, false
}

// ---- completions ----

type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []completionChoice `json:"choices"`
	Usage             json.RawMessage    `json:"usage,omitempty"`
	SystemFingerprint string             `json:"system_fingerprint"`
}

type completionChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

func promptText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, " "), true
	}
	return "", false
}

func (c *call) serveCompletions(body []byte) {
	var req completionRequest
	if !c.decodeOpenAI(body, &req, &req.Model) {
		return
	}
	prompt, ok := promptText(req.Prompt)
	if !ok {
		c.fail(http.StatusBadRequest, "", "Invalid 'prompt': expected a string or an array of strings.", "prompt")
		return
	}
	include, ok := c.includeUsage(req.StreamOptions)
	if !ok {
		return
	}
	maxTokens := 0
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	a := c.textAnswer(echoText(prompt), maxTokens)
	a.promptTokens = words(prompt)
	finish := "stop"
	if a.truncated {
		finish = "length"
	}
	id := fmt.Sprintf("cmpl-fake%08d", c.n)
	model := c.model(req.Model)
	usage := marshal(&openAIUsage{
		PromptTokens: a.promptTokens, CompletionTokens: a.completionTokens,
		TotalTokens: a.promptTokens + a.completionTokens,
	}, "")

	if !req.Stream {
		c.ok(completion{
			ID: id, Object: "text_completion", Created: c.created(), Model: model,
			Choices:           []completionChoice{{Text: a.text, Index: 0, FinishReason: &finish}},
			Usage:             usage,
			SystemFingerprint: "fp_fake",
		}, "  ")
		return
	}
	s := c.newStream()
	var usageNull json.RawMessage
	if include {
		usageNull = jsonNull
	}
	chunk := func(choices []completionChoice, u json.RawMessage) error {
		return s.sendJSON("", completion{
			ID: id, Object: "text_completion", Created: c.created(), Model: model,
			Choices: choices, Usage: u, SystemFingerprint: "fp_fake",
		})
	}
	for _, p := range textPieces(a.text) {
		if chunk([]completionChoice{{Text: p}}, usageNull) != nil {
			return
		}
	}
	if chunk([]completionChoice{{Text: "", FinishReason: &finish}}, usageNull) != nil {
		return
	}
	if include {
		if chunk([]completionChoice{}, usage) != nil {
			return
		}
	}
	_ = s.send("", []byte("[DONE]"))
}
