package fakeupstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI Responses API: POST …/responses, GET and DELETE …/responses/{id}.
//
// The answer follows the chat rules (echo of the last user message, a tool
// call when tools are given and the last input item is a user message, "The
// tool returned: …" after function_call_output items). Reasoning models
// (o1, o3, o4…, gpt-5…) or a request reasoning.effort other than "none" add
// a reasoning item first (with a summary when reasoning.summary is set).
// max_output_tokens cuts the text: status "incomplete",
// incomplete_details.reason "max_output_tokens". Ids are derived from the
// request (Options.MintIDs: new on every call). previous_response_id is
// accepted: when it names an answer this server stored, the parent's
// total_tokens count as input tokens; an unknown id is answered anyway (the
// real API says 400 previous_response_not_found) so that a restarted fake
// upstream still serves recorded chains. Answers with store not false are
// kept (the last maxStored) for GET, DELETE and cancel; "background": true
// answers status "queued" at once, and polling (GET …/responses/{id}) finds
// it "in_progress" backgroundPolls times, then completed — the sequence
// the API reference's background mode describes.

type responsesRequest struct {
	Model        string          `json:"model"`
	Input        json.RawMessage `json:"input"`
	Instructions json.RawMessage `json:"instructions"` // a string (or items)
	Tools        []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Stream             bool            `json:"stream"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Reasoning          *struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	Include           []string        `json:"include"`
	Store             *bool           `json:"store"`
	Temperature       *float64        `json:"temperature"`
	TopP              *float64        `json:"top_p"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	Metadata          json.RawMessage `json:"metadata"`
	Text              json.RawMessage `json:"text"`
	User              *string         `json:"user"`
	Background        bool            `json:"background"`
}

// responsesItem is one input item (any type; the fields used here).
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// maxStored bounds the answers kept for GET/DELETE.
const maxStored = 4096

type storedResponse struct {
	body        object
	totalTokens int
	// pending is the in_progress answer of a background response, served
	// to its first backgroundPolls GETs (polls counts them); nil otherwise.
	pending object
	polls   int
}

// backgroundPolls is how many polls find a background response still
// in progress.
const backgroundPolls = 2

// pollResponse returns what a GET of id answers now: a background
// response's in-progress answer for its first polls, else the stored
// answer.
func (h *Handler) pollResponse(id string) (object, bool) {
	h.storeMu.Lock()
	defer h.storeMu.Unlock()
	r, ok := h.stored[id]
	if !ok {
		return nil, false
	}
	if r.pending != nil && r.polls < backgroundPolls {
		r.polls++
		h.stored[id] = r
		return r.pending, true
	}
	return r.body, true
}

// markBackground makes id's stored answer a background one, in progress
// until polled backgroundPolls times.
func (h *Handler) markBackground(id string, pending object) {
	h.storeMu.Lock()
	defer h.storeMu.Unlock()
	if r, ok := h.stored[id]; ok {
		r.pending = pending
		h.stored[id] = r
	}
}

func (h *Handler) storeResponse(id string, body object, total int) {
	h.storeMu.Lock()
	defer h.storeMu.Unlock()
	if h.stored == nil {
		h.stored = map[string]storedResponse{}
	}
	if _, ok := h.stored[id]; !ok {
		h.order = append(h.order, id)
	}
	h.stored[id] = storedResponse{body: body, totalTokens: total}
	for len(h.order) > maxStored {
		delete(h.stored, h.order[0])
		h.order = h.order[1:]
	}
}

func (h *Handler) lookupResponse(id string) (storedResponse, bool) {
	h.storeMu.Lock()
	defer h.storeMu.Unlock()
	r, ok := h.stored[id]
	return r, ok
}

func (h *Handler) deleteResponse(id string) bool {
	h.storeMu.Lock()
	defer h.storeMu.Unlock()
	if _, ok := h.stored[id]; !ok {
		return false
	}
	delete(h.stored, id)
	for i, v := range h.order {
		if v == id {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
	return true
}

// isReasoningModel reports whether model is an OpenAI reasoning model.
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if model == p || strings.HasPrefix(model, p+"-") {
			return !strings.HasPrefix(model, "gpt-5-chat")
		}
	}
	return false
}

// responsesInput reads input (a string or an item array): the text of every
// message and tool output (for usage), the last user message's text, and the
// outputs of the trailing function_call_output items.
func responsesInput(raw json.RawMessage) (all []string, lastUser string, results []string, lastIsUser, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", nil, false, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, s, nil, true, true
	}
	var items []responsesItem
	if json.Unmarshal(raw, &items) != nil {
		return nil, "", nil, false, false
	}
	for _, it := range items {
		switch it.Type {
		case "", "message":
			t := contentText(it.Content, false)
			all = append(all, t)
			if it.Role == "user" {
				lastUser = t
			}
		case "function_call_output":
			all = append(all, contentText(it.Output, false))
		}
	}
	for i := len(items) - 1; i >= 0 && items[i].Type == "function_call_output"; i-- {
		results = append([]string{contentText(items[i].Output, false)}, results...)
	}
	if n := len(items); n > 0 && (items[n-1].Type == "" || items[n-1].Type == "message") && items[n-1].Role == "user" {
		lastIsUser = true
	}
	return all, lastUser, results, lastIsUser, true
}

// chooseResponsesTool picks the tool to call, honouring tool_choice ("none",
// or {"type":"function","name":…}).
func chooseResponsesTool(req responsesRequest) (name string, schema json.RawMessage, use bool) {
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) == nil && mode == "none" {
		return "", nil, false
	}
	var forced struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(req.ToolChoice, &forced)
	for _, t := range req.Tools {
		if t.Type == "function" && t.Name != "" && (forced.Name == "" || t.Name == forced.Name) {
			return t.Name, t.Parameters, true
		}
	}
	return "", nil, false
}

func rawOr(raw json.RawMessage, def any) any {
	if len(raw) == 0 || string(raw) == "null" {
		return def
	}
	return raw
}

func ptrOr[T any](p *T, def any) any {
	if p == nil {
		return def
	}
	return *p
}

func (c *call) serveResponses(body []byte) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		c.decodeError(err)
		return
	}
	if req.Model == "" {
		c.fail(http.StatusBadRequest, "", "Missing required parameter: 'model'.", "model")
		return
	}
	all, lastUser, results, lastIsUser, ok := responsesInput(req.Input)
	if !ok {
		c.fail(http.StatusBadRequest, "invalid_type",
			"Invalid type for 'input': expected one of a string or an array of input items.", "input")
		return
	}
	prompt := words(contentText(req.Instructions, false))
	for _, t := range all {
		prompt += words(t)
	}
	if req.PreviousResponseID != nil {
		if prev, ok := c.h.lookupResponse(*req.PreviousResponseID); ok {
			prompt += prev.totalTokens
		}
	}
	maxTokens := 0
	if req.MaxOutputTokens != nil {
		maxTokens = *req.MaxOutputTokens
	}

	a := c.reply(results, lastUser, len(req.Tools) > 0 && lastIsUser,
		func() (string, json.RawMessage, bool) { return chooseResponsesTool(req) }, maxTokens)
	a.promptTokens = prompt

	reasoning := isReasoningModel(req.Model)
	effort := any(nil)
	summaryMode := any(nil)
	if req.Reasoning != nil {
		if req.Reasoning.Effort != nil {
			effort = *req.Reasoning.Effort
			reasoning = *req.Reasoning.Effort != "none"
		}
		if req.Reasoning.Summary != nil {
			summaryMode = *req.Reasoning.Summary
		}
	}
	if reasoning && effort == nil {
		effort = "medium"
	}

	var raw struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(body, &raw)
	r := &responsesAnswer{c: c, req: req, toolsRaw: raw.Tools}
	r.id = c.hexID("resp_", "response", 0)
	if reasoning {
		topic := lastUser
		if len(results) > 0 {
			topic = "the tool result"
		}
		thought := "Thinking about: " + topic
		r.reasoningTokens = 2 + words(thought)
		it := fields("id", c.hexID("rs_", "reasoning", 0), "type", "reasoning", "summary", []any{})
		if summaryMode != nil && summaryMode != "none" {
			r.summary = thought
		}
		for _, inc := range req.Include {
			if inc == "reasoning.encrypted_content" {
				it = it.with("encrypted_content", "gAAAAA"+base64.StdEncoding.EncodeToString(c.derived("encrypted", 0, 48)))
			}
		}
		r.items = append(r.items, it)
	}
	r.status = "completed"
	if a.truncated {
		r.status = "incomplete"
	}
	if len(a.calls) == 0 {
		r.items = append(r.items, fields(
			"id", c.hexID("msg_", "message", 0), "type", "message", "status", r.status, "content", []any{}, "role", "assistant"))
	}
	for i := range a.calls {
		tc := &a.calls[i]
		tc.id = "call_" + c.hexID("", "call", i)[:24]
		r.items = append(r.items, fields(
			"id", c.hexID("fc_", "function_call", i), "type", "function_call", "status", "completed",
			"arguments", tc.args, "call_id", tc.id, "name", tc.name))
	}
	r.a = a
	r.reasoningEffort, r.summaryMode = effort, summaryMode

	final := r.response(r.status, true)
	if req.Store == nil || *req.Store {
		c.h.storeResponse(r.id, final, r.totalTokens())
	}
	if req.Background && !req.Stream {
		// Queued at once; polling (GET) finds it in progress, then finished.
		c.h.markBackground(r.id, r.response("in_progress", false))
		c.ok(r.response("queued", false), "  ")
		return
	}
	if !req.Stream {
		c.ok(final, "  ")
		return
	}
	r.stream(final)
}

// responsesAnswer is one Responses answer being written. Every object is
// built in the API's member order.
type responsesAnswer struct {
	c               *call
	req             responsesRequest
	toolsRaw        json.RawMessage // the request's tools, echoed verbatim
	a               answer
	id              string
	status          string
	items           []object // output items without their content
	summary         string   // reasoning summary text ("" = none)
	reasoningTokens int
	reasoningEffort any
	summaryMode     any
}

func (r *responsesAnswer) outputTokens() int { return r.a.completionTokens + r.reasoningTokens }
func (r *responsesAnswer) totalTokens() int  { return r.a.promptTokens + r.outputTokens() }

func textPart(text string) object {
	return fields("type", "output_text", "annotations", []any{}, "logprobs", []any{}, "text", text)
}

func summaryPart(text string) object { return fields("type", "summary_text", "text", text) }

// full returns output item i complete.
func (r *responsesAnswer) full(i int) object {
	it := r.items[i]
	switch it.get("type") {
	case "message":
		it = it.with("content", []any{textPart(r.a.text)})
	case "reasoning":
		if r.summary != "" {
			it = it.with("summary", []any{summaryPart(r.summary)})
		}
	}
	return it
}

// added returns output item i as output_item.added shows it (empty).
func (r *responsesAnswer) added(i int) object {
	it := r.items[i]
	switch it.get("type") {
	case "message":
		it = it.with("status", "in_progress")
	case "function_call":
		it = it.with("status", "in_progress").with("arguments", "")
	}
	return it
}

// response returns the response object with status; done adds the output
// and usage (response.created/in_progress/queued have neither).
func (r *responsesAnswer) response(status string, done bool) object {
	req := r.req
	var incomplete any
	if status == "incomplete" {
		incomplete = fields("reason", "max_output_tokens")
	}
	output := []any{}
	var usage any
	if done {
		for i := range r.items {
			output = append(output, r.full(i))
		}
		usage = fields(
			"input_tokens", r.a.promptTokens,
			"input_tokens_details", fields("cached_tokens", 0),
			"output_tokens", r.outputTokens(),
			"output_tokens_details", fields("reasoning_tokens", r.reasoningTokens),
			"total_tokens", r.totalTokens())
	}
	return fields(
		"id", r.id,
		"object", "response",
		"created_at", r.c.stamp(),
		"status", status,
		"background", req.Background,
		"error", nil,
		"incomplete_details", incomplete,
		"instructions", rawOr(req.Instructions, nil),
		"max_output_tokens", ptrOr(req.MaxOutputTokens, nil),
		"max_tool_calls", nil,
		"model", r.c.model(req.Model),
		"output", output,
		"parallel_tool_calls", ptrOr(req.ParallelToolCalls, true),
		"previous_response_id", ptrOr(req.PreviousResponseID, nil),
		"prompt_cache_key", nil,
		"reasoning", fields("effort", r.reasoningEffort, "summary", r.summaryMode),
		"safety_identifier", nil,
		"service_tier", "default",
		"store", ptrOr(req.Store, true),
		"temperature", ptrOr(req.Temperature, 1.0),
		"text", rawOr(req.Text, fields("format", fields("type", "text"), "verbosity", "medium")),
		"tool_choice", rawOr(req.ToolChoice, "auto"),
		"tools", rawOr(r.toolsRaw, []any{}),
		"top_logprobs", 0,
		"top_p", ptrOr(req.TopP, 1.0),
		"truncation", "disabled",
		"usage", usage,
		"user", ptrOr(req.User, nil),
		"metadata", rawOr(req.Metadata, fields()))
}

// stream writes the typed SSE events in the API's order; every event starts
// with its type and sequence_number.
func (r *responsesAnswer) stream(final object) {
	s := r.c.newStream()
	seq := 0
	send := func(typ string, kv ...any) bool {
		ev := append(fields("type", typ, "sequence_number", seq), fields(kv...)...)
		seq++
		return s.sendJSON(typ, ev) == nil
	}
	if !send("response.created", "response", r.response("in_progress", false)) ||
		!send("response.in_progress", "response", r.response("in_progress", false)) {
		return
	}
	for i, it := range r.items {
		id := it.get("id")
		if !send("response.output_item.added", "output_index", i, "item", r.added(i)) {
			return
		}
		switch it.get("type") {
		case "reasoning":
			if r.summary != "" {
				at := []any{"item_id", id, "output_index", i, "summary_index", 0}
				if !send("response.reasoning_summary_part.added", append(at, "part", summaryPart(""))...) {
					return
				}
				for k, p := range textPieces(r.summary) {
					if !send("response.reasoning_summary_text.delta", append(at, "delta", p, "obfuscation", obfuscation(k))...) {
						return
					}
				}
				if !send("response.reasoning_summary_text.done", append(at, "text", r.summary)...) ||
					!send("response.reasoning_summary_part.done", append(at, "part", summaryPart(r.summary))...) {
					return
				}
			}
		case "message":
			at := []any{"item_id", id, "output_index", i, "content_index", 0}
			if !send("response.content_part.added", append(at, "part", textPart(""))...) {
				return
			}
			for k, p := range textPieces(r.a.text) {
				if !send("response.output_text.delta", append(at, "delta", p, "logprobs", []any{}, "obfuscation", obfuscation(k))...) {
					return
				}
			}
			if !send("response.output_text.done", append(at, "text", r.a.text, "logprobs", []any{})...) ||
				!send("response.content_part.done", append(at, "part", textPart(r.a.text))...) {
				return
			}
		case "function_call":
			args, _ := it.get("arguments").(string)
			for k, p := range bytePieces(args, 6) {
				if !send("response.function_call_arguments.delta", "item_id", id, "output_index", i, "delta", p, "obfuscation", obfuscation(k)) {
					return
				}
			}
			if !send("response.function_call_arguments.done", "item_id", id, "output_index", i, "arguments", args, "name", it.get("name")) {
				return
			}
		}
		if !send("response.output_item.done", "output_index", i, "item", r.full(i)) {
			return
		}
	}
	last := "response.completed"
	if r.status == "incomplete" {
		last = "response.incomplete"
	}
	send(last, "response", final)
}

// serveResponseByID answers GET (the stored response), DELETE (a deletion
// receipt) and POST …/cancel (the stored response, status "cancelled" when it
// was a background one, else 400 as the API says) for …/responses/{id}, or
// 404 for an id not stored.
func (c *call) serveResponseByID() {
	id := c.rt.id
	if c.ep == epResponseCancel {
		r, ok := c.h.lookupResponse(id)
		switch {
		case !ok:
		case r.body.get("background") != true:
			c.fail(http.StatusBadRequest, "", "Only responses created with background=true can be cancelled.", "")
			return
		default:
			c.ok(r.body.with("status", "cancelled"), "  ")
			return
		}
	} else if c.ep == epResponseDelete {
		if c.h.deleteResponse(id) {
			c.ok(fields("id", id, "object", "response", "deleted", true), "  ")
			return
		}
	} else if body, ok := c.h.pollResponse(id); ok {
		c.ok(body, "  ")
		return
	}
	c.fail(http.StatusNotFound, "", fmt.Sprintf("Response with id '%s' not found.", id), "")
}
