package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Ollama native: POST …/api/chat, …/api/generate, …/api/embed. No key is
// needed. Answers stream as NDJSON (one JSON object per line,
// application/x-ndjson) unless the body says "stream": false: "done": false
// chunks, then a "done": true line with done_reason ("stop", or "length"
// when options.num_predict cut the text), the durations and the counts
// (prompt_eval_count = words of the messages, eval_count = words of the
// answer). Chat follows the chat rules: a trailing "tool" message gives "The
// tool returned: …", tools and a last user message give message.tool_calls
// (arguments an object, like Ollama's). "think" (true or a level) adds
// message.thinking (generate: "thinking"). Generate with an empty prompt
// answers done_reason "load", as Ollama does. Embed returns L2-normalized
// vectors (768 values, or dimensions) and prompt_eval_count. Errors are
// {"error":"…"}.

// ollamaEmbeddingSize is the size of every fake Ollama embedding model.
const ollamaEmbeddingSize = 768

type ollamaOptions struct {
	NumPredict *int `json:"num_predict"`
}

type ollamaChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Tools   []functionTool  `json:"tools"`
	Stream  *bool           `json:"stream"`
	Think   json.RawMessage `json:"think"`
	Options *ollamaOptions  `json:"options"`
}

type ollamaGenerateRequest struct {
	Model   string          `json:"model"`
	Prompt  string          `json:"prompt"`
	System  string          `json:"system"`
	Stream  *bool           `json:"stream"`
	Think   json.RawMessage `json:"think"`
	Options *ollamaOptions  `json:"options"`
}

type ollamaEmbedRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"`
	Dimensions *int            `json:"dimensions"`
}

// thinks reports whether an Ollama think value asks for thinking (true or a
// level such as "high").
func thinks(raw json.RawMessage) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s != "" && s != "false"
}

func (o *ollamaOptions) numPredict() int {
	if o == nil || o.NumPredict == nil || *o.NumPredict < 0 {
		return 0
	}
	return *o.NumPredict
}

// createdAt is Ollama's created_at (see call.stamp).
func (c *call) createdAt() string {
	return time.Unix(c.stamp(), 123456789).UTC().Format(time.RFC3339Nano)
}

// ollamaMetrics are the counters of a done line, durations derived from
// them, in Ollama's order.
func ollamaMetrics(prompt, eval int) object {
	return fields(
		"total_duration", int64(1_000_000+250_000*(prompt+eval)),
		"load_duration", int64(500_000),
		"prompt_eval_count", prompt,
		"prompt_eval_duration", int64(100_000*prompt),
		"eval_count", eval,
		"eval_duration", int64(150_000*eval))
}

// assistant is an Ollama chat message; empty thinking and tool calls are
// omitted, as Ollama does.
func assistant(content, thinking string, calls []any) object {
	m := fields("role", "assistant", "content", content)
	if thinking != "" {
		m = m.with("thinking", thinking)
	}
	if len(calls) > 0 {
		m = m.with("tool_calls", calls)
	}
	return m
}

// ollamaStream writes NDJSON lines.
func (c *call) ollamaStream() *stream {
	s := c.newStream()
	s.contentType = "application/x-ndjson"
	return s
}

func (s *stream) sendLine(v any) error { return s.write(append(marshal(v, ""), '\n')) }

// decodeOllama decodes an Ollama request body into req and requires its
// model (*model, a field of req); false when it answered 400.
func (c *call) decodeOllama(body []byte, req any, model *string) bool {
	if err := json.Unmarshal(body, req); err != nil {
		c.fail(http.StatusBadRequest, "", "invalid request body: "+err.Error(), "")
		return false
	}
	if *model == "" {
		c.fail(http.StatusBadRequest, "", "model is required", "")
		return false
	}
	return true
}

func (c *call) serveOllamaChat(body []byte) {
	var req ollamaChatRequest
	if !c.decodeOllama(body, &req, &req.Model) {
		return
	}
	prompt := 0
	lastUser := ""
	for _, m := range req.Messages {
		prompt += words(m.Content)
		if m.Role == "user" {
			lastUser = m.Content
		}
	}
	lastRole := ""
	if n := len(req.Messages); n > 0 {
		lastRole = req.Messages[n-1].Role
	}
	maxTokens := req.Options.numPredict()
	var results []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		results = append([]string{req.Messages[i].Content}, results...)
	}
	a := c.reply(results, lastUser, len(req.Tools) > 0 && lastRole == "user",
		func() (string, json.RawMessage, bool) {
			t := req.Tools[0].Function
			return t.Name, t.Parameters, t.Name != ""
		}, maxTokens)
	a.promptTokens = prompt
	thinking := ""
	if thinks(req.Think) {
		thinking = "Thinking about: " + lastUser
	}
	var calls []any
	for i, tc := range a.calls {
		calls = append(calls, fields("id", tc.id,
			"function", fields("index", i, "name", tc.name, "arguments", json.RawMessage(tc.args))))
	}
	reason := "stop"
	if a.truncated {
		reason = "length"
	}
	model := c.model(req.Model)
	line := func(msg object, done bool) object {
		m := fields("model", model, "created_at", c.createdAt(), "message", msg, "done", done)
		if done {
			m = append(m.with("done_reason", reason), ollamaMetrics(a.promptTokens, a.completionTokens+words(thinking))...)
		}
		return m
	}
	if req.Stream != nil && !*req.Stream {
		c.ok(line(assistant(a.text, thinking, calls), true), "")
		return
	}
	s := c.ollamaStream()
	for _, p := range textPieces(thinking) {
		if s.sendLine(line(assistant("", p, nil), false)) != nil {
			return
		}
	}
	for _, p := range textPieces(a.text) {
		if s.sendLine(line(assistant(p, "", nil), false)) != nil {
			return
		}
	}
	if len(calls) > 0 {
		if s.sendLine(line(assistant("", "", calls), false)) != nil {
			return
		}
	}
	_ = s.sendLine(line(assistant("", "", nil), true))
}

func (c *call) serveOllamaGenerate(body []byte) {
	var req ollamaGenerateRequest
	if !c.decodeOllama(body, &req, &req.Model) {
		return
	}
	model := c.model(req.Model)
	if req.Prompt == "" {
		// Ollama loads the model and answers at once.
		c.ok(fields("model", model, "created_at", c.createdAt(), "response", "", "done", true, "done_reason", "load"), "")
		return
	}
	a := c.textAnswer(echoText(req.Prompt), req.Options.numPredict())
	a.promptTokens = words(req.System) + words(req.Prompt)
	thinking := ""
	if thinks(req.Think) {
		thinking = "Thinking about: " + req.Prompt
	}
	reason := "stop"
	if a.truncated {
		reason = "length"
	}
	line := func(resp, think string, done bool) object {
		m := fields("model", model, "created_at", c.createdAt(), "response", resp)
		if think != "" {
			m = m.with("thinking", think)
		}
		m = m.with("done", done)
		if done {
			ctx := make([]int, a.promptTokens+a.completionTokens)
			for i := range ctx {
				ctx[i] = 1000 + i
			}
			m = append(m.with("done_reason", reason).with("context", ctx), ollamaMetrics(a.promptTokens, a.completionTokens+words(thinking))...)
		}
		return m
	}
	if req.Stream != nil && !*req.Stream {
		c.ok(line(a.text, thinking, true), "")
		return
	}
	s := c.ollamaStream()
	for _, p := range textPieces(thinking) {
		if s.sendLine(line("", p, false)) != nil {
			return
		}
	}
	for _, p := range textPieces(a.text) {
		if s.sendLine(line(p, "", false)) != nil {
			return
		}
	}
	_ = s.sendLine(line("", "", true))
}

func (c *call) serveOllamaEmbed(body []byte) {
	var req ollamaEmbedRequest
	if !c.decodeOllama(body, &req, &req.Model) {
		return
	}
	var texts []string
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		texts = []string{s}
	} else if json.Unmarshal(req.Input, &texts) != nil || len(texts) == 0 {
		c.fail(http.StatusBadRequest, "", "invalid input type", "")
		return
	}
	dims := ollamaEmbeddingSize
	if d := req.Dimensions; d != nil && *d != 0 {
		if *d < 0 || *d > ollamaEmbeddingSize {
			c.fail(http.StatusBadRequest, "", fmt.Sprintf("invalid dimensions: %d is not between 1 and %d", *d, ollamaEmbeddingSize), "")
			return
		}
		dims = *d
	}
	tokens := 0
	out := make([][]float32, len(texts))
	for i, t := range texts {
		tokens += words(t)
		out[i] = c.embedding(req.Model, strings.TrimSpace(t), dims)
	}
	met := ollamaMetrics(tokens, 0)
	c.ok(fields("model", c.model(req.Model), "embeddings", out, "total_duration", met.get("total_duration"),
		"load_duration", met.get("load_duration"), "prompt_eval_count", tokens), "")
}
