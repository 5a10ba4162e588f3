package gen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

// Kind is the wire format of a generated set's calls. Every kind carries
// the same conversation for index i (system prompt, three turns, answer),
// so their figures compare.
type Kind string

const (
	// Chat: OpenAI chat completions (even indices) and Anthropic messages
	// (odd), the set of Item and HTTPRequest.
	Chat Kind = "chat"
	// Responses: OpenAI Responses API calls, POST /v1/responses (format
	// 1.1.0 endpoint), streamed with "stream": true.
	Responses Kind = "responses"
	// Gemini: Gemini generateContent calls, POST
	// /v1beta/models/gemini-2.5-flash:generateContent, streamed as
	// :streamGenerateContent?alt=sse (same body, same key).
	Gemini Kind = "gemini"
	// Wire: Anthropic messages recorded streamed, stored as format 1.2.0
	// stores a stream — its events as sent (response.wire), no body. A
	// streamed call is answered from the events, a plain one with the body
	// they assemble to.
	Wire Kind = "wire"
	// Bedrock: Amazon Bedrock Converse calls, POST
	// /model/{model id, %3A for ":"}/converse, streamed as /converse-stream
	// (same body, same key), recorded streamed: stored as their AWS
	// event-stream frames, like Wire. Sent signed with SigV4 (NeedsSigV4).
	Bedrock Kind = "bedrock"
)

// Kinds lists every kind, Chat first.
var Kinds = []Kind{Chat, Responses, Gemini, Wire, Bedrock}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown call kind %q: want one of %s", s, strings.Join(names, ", "))
}

const (
	responsesModel = "gpt-4.1-mini"
	geminiModel    = "gemini-2.5-flash"
	geminiPath     = "/v1beta/models/" + geminiModel + ":"
)

// Item returns the call of index i of kind k.
func (k Kind) Item(i int) snapshottest.Item {
	switch k {
	case Responses:
		return responsesItem(i)
	case Gemini:
		return geminiItem(i)
	case Wire:
		return wireItem(i)
	case Bedrock:
		return bedrockItem(i)
	}
	return Item(i)
}

// HTTPRequest returns the call of index i of kind k as the application
// sends it; stream asks for the streamed answer. A kind that NeedsSigV4
// is returned unsigned.
func (k Kind) HTTPRequest(i int, stream bool) Request {
	switch k {
	case Responses:
		body := k.Item(i).Request
		if stream {
			body["stream"] = true
		}
		return Request{Path: "/v1/responses", Header: bearer(), Body: marshal(body)}
	case Gemini:
		body := k.Item(i).Request
		delete(body, "model") // the path carries it
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("x-goog-api-key", "bench-key")
		path := geminiPath + "generateContent"
		if stream {
			path = geminiPath + "streamGenerateContent?alt=sse"
		}
		return Request{Path: path, Header: h, Body: marshal(body)}
	case Wire:
		return itemRequest(anthropicItem(i), stream)
	case Bedrock:
		return bedrockRequest(i, stream)
	}
	return HTTPRequest(i, stream)
}

func bearer() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer bench-key")
	return h
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // generated values always marshal
	}
	return b
}

// withFields completes it: the normalized fields are the format's own
// reading of the body (as record extracts them), the body decoded the way
// a set read from disk holds it.
func withFields(it snapshottest.Item, body map[string]any, latencyMS int64) snapshottest.Item {
	v, err := provider.DecodeValue(marshal(body))
	if err != nil {
		panic(err)
	}
	decoded := v.(map[string]any)
	f, err := FormatOf(it).Fields(decoded)
	if err != nil {
		panic(fmt.Sprintf("bench/gen: %s body of a generated item: %v", it.Endpoint, err)) // a generator bug
	}
	it.Response = snapshot.Response{Fields: f, LatencyMS: latencyMS, Body: decoded}
	it.Time = snapshottest.BaseTime
	return it
}

// responsesItem is an OpenAI Responses call: instructions, the three turns
// as input messages, and the API's full response object (it echoes the
// instructions and settings) with one output message.
func responsesItem(i int) snapshottest.Item {
	system, first, reply, user, content, in, out := conversation(i)
	req := map[string]any{
		"model":        responsesModel,
		"instructions": system,
		"input": []any{
			map[string]any{"role": "user", "content": first},
			map[string]any{"role": "assistant", "content": reply},
			map[string]any{"role": "user", "content": user},
		},
		"temperature":       int64(0),
		"max_output_tokens": int64(512),
	}
	body := map[string]any{
		"id": fmt.Sprintf("resp_bench%040d", i), "object": "response", "created_at": int64(1767225600 + i),
		"status": "completed", "background": false, "error": nil, "incomplete_details": nil,
		"instructions": system, "max_output_tokens": int64(512), "max_tool_calls": nil, "model": responsesModel + "-2025-04-14",
		"output": []any{map[string]any{
			"id": fmt.Sprintf("msg_bench%040d", i), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": content}},
		}},
		"parallel_tool_calls": true, "previous_response_id": nil, "prompt_cache_key": nil,
		"reasoning": map[string]any{"effort": nil, "summary": nil}, "safety_identifier": nil,
		"service_tier": "default", "store": true, "temperature": int64(0),
		"text":        map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"},
		"tool_choice": "auto", "tools": []any{}, "top_logprobs": int64(0), "top_p": int64(1), "truncation": "disabled",
		"usage": map[string]any{
			"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": int64(0)},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": int64(0)},
			"total_tokens": in + out,
		},
		"user": nil, "metadata": map[string]any{},
	}
	it := snapshottest.Item{Provider: "openai", Endpoint: "/v1/responses", Request: req,
		Source: source.Source{File: "src/agents/operations.ts", Line: 30 + i%50, Function: "answerTicket"}}
	return withFields(it, body, 850)
}

// geminiParts is how many text parts a Gemini answer has: the body of a
// recorded :streamGenerateContent call keeps each chunk's part (the
// assembler does not merge them), and replay streams one chunk per part.
const geminiParts = 4

// geminiItem is a Gemini generateContent call: systemInstruction, the three
// turns as contents, generationConfig with temperature 0, a seed and
// maxOutputTokens, and the answer as recorded from a stream (geminiParts
// text parts), with usageMetadata.
func geminiItem(i int) snapshottest.Item {
	system, first, reply, user, content, in, out := conversation(i)
	textPart := func(s string) map[string]any { return map[string]any{"text": s} }
	req := map[string]any{
		"model":             geminiModel,
		"systemInstruction": map[string]any{"parts": []any{textPart(system)}},
		"contents": []any{
			map[string]any{"role": "user", "parts": []any{textPart(first)}},
			map[string]any{"role": "model", "parts": []any{textPart(reply)}},
			map[string]any{"role": "user", "parts": []any{textPart(user)}},
		},
		"generationConfig": map[string]any{"temperature": int64(0), "seed": int64(42), "maxOutputTokens": int64(512)},
	}
	var parts []any
	for _, p := range splitWords(content, geminiParts) {
		parts = append(parts, textPart(p))
	}
	body := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"parts": parts, "role": "model"},
			"finishReason": "STOP",
			"index":        int64(0),
		}},
		"usageMetadata": map[string]any{
			"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out,
			"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": in}},
		},
		"modelVersion": geminiModel,
		"responseId":   fmt.Sprintf("bench%018d", i),
	}
	it := snapshottest.Item{Provider: "gemini", Endpoint: provider.Endpoint(geminiPath + "generateContent"), Request: req,
		Source: source.Source{File: "app/agents/support.py", Line: 20 + i%50, Function: "answer_ticket"}}
	return withFields(it, body, 700)
}

// splitWords cuts s into n pieces at word boundaries that concatenate back
// to s (each piece but the last ends with its space).
func splitWords(s string, n int) []string {
	words := strings.SplitAfter(s, " ")
	var out []string
	per := (len(words) + n - 1) / n
	for len(words) > 0 {
		k := min(per, len(words))
		out = append(out, strings.Join(words[:k], ""))
		words = words[k:]
	}
	return out
}
