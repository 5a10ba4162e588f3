package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
)

type messagesRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Stream    bool `json:"stream"`
	MaxTokens *int `json:"max_tokens"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type blockDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

// toolResults returns the text of each tool_result block of content.
func toolResults(raw json.RawMessage) []string {
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		if b.Type == "tool_result" {
			out = append(out, contentText(b.Content, false))
		}
	}
	return out
}

func (c *call) serveMessages(body []byte) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		c.decodeError(err)
		return
	}
	if req.Model == "" {
		c.fail(http.StatusBadRequest, "", "model: Field required", "")
		return
	}
	if req.Messages == nil {
		c.fail(http.StatusBadRequest, "", "messages: Field required", "")
		return
	}
	prompt := words(contentText(req.System, false))
	lastUser := ""
	for _, m := range req.Messages {
		prompt += words(contentText(m.Content, true))
		if m.Role == "user" {
			if t := contentText(m.Content, false); t != "" || len(toolResults(m.Content)) == 0 {
				lastUser = t
			}
		}
	}
	maxTokens := 0
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}

	var a answer
	var results []string
	lastIsUser := false
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" {
		lastIsUser = true
		results = toolResults(req.Messages[n-1].Content)
	}
	switch {
	case len(results) > 0:
		a = c.textAnswer(toolResultText(results), maxTokens)
	case len(req.Tools) > 0 && lastIsUser && (req.ToolChoice == nil || req.ToolChoice.Type != "none"):
		t := req.Tools[0]
		if req.ToolChoice != nil && req.ToolChoice.Type == "tool" {
			for _, cand := range req.Tools {
				if cand.Name == req.ToolChoice.Name {
					t = cand
					break
				}
			}
		}
		a = c.toolAnswer(t.Name, t.InputSchema, lastUser, "toolu_")
	default:
		a = c.textAnswer(echoText(lastUser), maxTokens)
	}
	a.promptTokens = prompt

	stop := "end_turn"
	switch {
	case len(a.calls) > 0:
		stop = "tool_use"
	case a.truncated:
		stop = "max_tokens"
	}
	id := fmt.Sprintf("msg_fake%08d", c.n)
	model := c.model(req.Model)
	usage := anthropicUsage{InputTokens: a.promptTokens, OutputTokens: a.completionTokens}

	var blocks []anthropicBlock
	if len(a.calls) == 0 {
		text := a.text
		blocks = append(blocks, anthropicBlock{Type: "text", Text: &text})
	}
	for _, tc := range a.calls {
		blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: tc.id, Name: tc.name, Input: json.RawMessage(tc.args)})
	}

	if !req.Stream {
		c.ok(anthropicMessage{
			ID: id, Type: "message", Role: "assistant", Model: model,
			Content: blocks, StopReason: &stop, Usage: usage,
		}, "")
		return
	}

	s := c.newStream()
	startUsage := usage
	startUsage.OutputTokens = 1
	if s.sendJSON("message_start", struct {
		Type    string           `json:"type"`
		Message anthropicMessage `json:"message"`
	}{"message_start", anthropicMessage{
		ID: id, Type: "message", Role: "assistant", Model: model,
		Content: []anthropicBlock{}, Usage: startUsage,
	}}) != nil {
		return
	}
	for i, b := range blocks {
		start := b
		var pieces []string
		var deltaType, field string
		if b.Type == "text" {
			empty := ""
			start.Text = &empty
			pieces = textPieces(*b.Text)
			deltaType, field = "text_delta", "text"
		} else {
			start.Input = json.RawMessage("{}")
			pieces = append([]string{""}, bytePieces(string(b.Input), 6)...)
			deltaType, field = "input_json_delta", "partial_json"
		}
		if s.sendJSON("content_block_start", struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock anthropicBlock `json:"content_block"`
		}{"content_block_start", i, start}) != nil {
			return
		}
		if i == 0 {
			if s.send("ping", []byte(`{"type": "ping"}`)) != nil {
				return
			}
		}
		for _, p := range pieces {
			d := blockDelta{Type: deltaType}
			if field == "text" {
				d.Text = &p
			} else {
				d.PartialJSON = &p
			}
			if s.sendJSON("content_block_delta", struct {
				Type  string     `json:"type"`
				Index int        `json:"index"`
				Delta blockDelta `json:"delta"`
			}{"content_block_delta", i, d}) != nil {
				return
			}
		}
		if s.sendJSON("content_block_stop", struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		}{"content_block_stop", i}) != nil {
			return
		}
	}
	type messageDelta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	type deltaUsage struct {
		OutputTokens int `json:"output_tokens"`
	}
	if s.sendJSON("message_delta", struct {
		Type  string       `json:"type"`
		Delta messageDelta `json:"delta"`
		Usage deltaUsage   `json:"usage"`
	}{"message_delta", messageDelta{StopReason: stop}, deltaUsage{a.completionTokens}}) != nil {
		return
	}
	_ = s.send("message_stop", []byte(`{"type":"message_stop"}`))
}
