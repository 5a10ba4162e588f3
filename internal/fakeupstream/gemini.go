package fakeupstream

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Gemini: POST …/{v1,v1beta,v1alpha}/models/{model}:generateContent,
// :streamGenerateContent (alt=sse: SSE "data:" chunks ended by "\r\n\r\n",
// as Google sends them; without alt=sse: one JSON array written piece by
// piece), :embedContent and :batchEmbedContents. The key is the
// x-goog-api-key header or the key query parameter (else 403
// PERMISSION_DENIED in Google's error shape).
//
// The answer follows the chat rules over contents: a functionResponse in the
// last user turn gives "The tool returned: <response JSON>"; function
// declarations (toolConfig mode not NONE) and a last user turn with text give
// functionCall parts. generationConfig.thinkingConfig thinks (unless
// thinkingBudget is 0): thoughtsTokenCount counts the thought, includeThoughts
// adds it as a first part with "thought": true, and the first functionCall
// part carries a thoughtSignature. maxOutputTokens cuts the text
// (finishReason MAX_TOKENS). Embeddings are the same unit vectors as OpenAI's
// (gemini-embedding-… 3072 values, others 768, or outputDimensionality), with
// no usage.

type geminiPart struct {
	Text             *string         `json:"text"`
	Thought          bool            `json:"thought"`
	FunctionCall     json.RawMessage `json:"functionCall"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	Model             string          `json:"model"`
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             geminiToolList  `json:"tools"`
	ToolConfig        *struct {
		FunctionCallingConfig *struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		MaxOutputTokens *int `json:"maxOutputTokens"`
		ThinkingConfig  *struct {
			IncludeThoughts bool `json:"includeThoughts"`
			ThinkingBudget  *int `json:"thinkingBudget"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

type geminiTool struct {
	FunctionDeclarations []struct {
		Name                 string          `json:"name"`
		Parameters           json.RawMessage `json:"parameters"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		// The API parses proto JSON, which accepts a field's original
		// proto name beside its lowerCamelCase one; the Python SDK
		// (google-genai) sends this one in snake_case.
		ParametersJSONSchemaProto json.RawMessage `json:"parameters_json_schema"`
	} `json:"functionDeclarations"`
}

// geminiToolList reads "tools" as the API does: an array of Tool objects, or
// one Tool object (DESIGN §13.3).
type geminiToolList []geminiTool

func (t *geminiToolList) UnmarshalJSON(b []byte) error {
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '{' {
		var one geminiTool
		if err := json.Unmarshal(trimmed, &one); err != nil {
			return err
		}
		*t = geminiToolList{one}
		return nil
	}
	var many []geminiTool
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

// decodeGemini decodes a Gemini request body into req; false when it
// answered 400.
func (c *call) decodeGemini(body []byte, req any) bool {
	if err := json.Unmarshal(body, req); err != nil {
		c.fail(http.StatusBadRequest, "", "Invalid JSON payload received. "+err.Error(), "")
		return false
	}
	return true
}

// geminiText joins the text parts of a content (thoughts excluded).
func geminiText(c *geminiContent) string {
	if c == nil {
		return ""
	}
	var out []string
	for _, p := range c.Parts {
		if p.Text != nil && !p.Thought {
			out = append(out, *p.Text)
		}
	}
	return strings.Join(out, " ")
}

// chooseGeminiTool picks the declaration to call (the first allowed one).
func chooseGeminiTool(req geminiRequest) (name string, schema json.RawMessage, use bool) {
	var allowed []string
	if tc := req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		if strings.EqualFold(tc.FunctionCallingConfig.Mode, "NONE") {
			return "", nil, false
		}
		allowed = tc.FunctionCallingConfig.AllowedFunctionNames
	}
	for _, t := range req.Tools {
		for _, fd := range t.FunctionDeclarations {
			if fd.Name == "" {
				continue
			}
			ok := len(allowed) == 0
			for _, a := range allowed {
				ok = ok || a == fd.Name
			}
			if !ok {
				continue
			}
			schema := fd.Parameters
			for _, alt := range []json.RawMessage{fd.ParametersJSONSchema, fd.ParametersJSONSchemaProto} {
				if len(schema) == 0 || string(schema) == "null" {
					schema = alt
				}
			}
			return fd.Name, schema, true
		}
	}
	return "", nil, false
}

// geminiPartOut is an answer part; Thought is omitted when false.
type geminiPartOut struct {
	Text             *string       `json:"text,omitempty"`
	Thought          bool          `json:"thought,omitempty"`
	FunctionCall     *geminiFnCall `json:"functionCall,omitempty"`
	ThoughtSignature string        `json:"thoughtSignature,omitempty"`
}

type geminiFnCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

func (c *call) serveGeminiGenerate(body []byte) {
	var req geminiRequest
	if !c.decodeGemini(body, &req) {
		return
	}
	if len(req.Contents) == 0 {
		c.fail(http.StatusBadRequest, "", "* GenerateContentRequest.contents: contents is not specified\n", "")
		return
	}
	prompt := words(geminiText(req.SystemInstruction))
	lastUser := ""
	for i := range req.Contents {
		ct := &req.Contents[i]
		prompt += words(geminiText(ct))
		for _, p := range ct.Parts {
			if p.FunctionResponse != nil {
				prompt += words(string(p.FunctionResponse.Response))
			}
		}
		if ct.Role == "user" || ct.Role == "" {
			if t := geminiText(ct); t != "" {
				lastUser = t
			}
		}
	}
	last := req.Contents[len(req.Contents)-1]
	var results []string
	lastHasText := false
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			results = append(results, string(marshal(json.RawMessage(p.FunctionResponse.Response), "")))
		}
		if p.Text != nil {
			lastHasText = true
		}
	}
	maxTokens := 0
	if gc := req.GenerationConfig; gc != nil && gc.MaxOutputTokens != nil {
		maxTokens = *gc.MaxOutputTokens
	}
	a := c.reply(results, lastUser, len(req.Tools) > 0 && lastHasText && last.Role != "model",
		func() (string, json.RawMessage, bool) {
			name, schema, use := chooseGeminiTool(req)
			return name, lowerTypes(schema), use
		}, maxTokens)
	a.promptTokens = prompt

	thinking, include := false, false // thinks; sends the thought
	if gc := req.GenerationConfig; gc != nil && gc.ThinkingConfig != nil {
		tc := gc.ThinkingConfig
		thinking = tc.ThinkingBudget == nil || *tc.ThinkingBudget != 0
		include = thinking && tc.IncludeThoughts
	}
	thought := ""
	if thinking {
		thought = "Thinking about: " + lastUser
		if len(results) > 0 {
			thought = "Thinking about: the tool result"
		}
	}

	var parts []geminiPartOut
	if include {
		t := thought
		parts = append(parts, geminiPartOut{Text: &t, Thought: true})
	}
	for i, tc := range a.calls {
		p := geminiPartOut{FunctionCall: &geminiFnCall{Name: tc.name, Args: json.RawMessage(tc.args)}}
		if i == 0 && thinking {
			p.ThoughtSignature = base64.StdEncoding.EncodeToString(c.derived("thoughtSignature", 0, 48))
		}
		parts = append(parts, p)
	}
	if len(a.calls) == 0 {
		t := a.text
		parts = append(parts, geminiPartOut{Text: &t})
	}
	finish := "STOP"
	if a.truncated {
		finish = "MAX_TOKENS"
	}
	g := geminiAnswer{model: c.model(c.rt.model), id: c.googleID("response"), prompt: a.promptTokens, thoughts: words(thought)}
	if c.ep == epGeminiGenerate {
		c.ok(g.chunk(parts, finish, a.completionTokens), "  ")
		return
	}

	// Streamed: the thought, then the text in pieces, or the function calls
	// at once; the last chunk has finishReason.
	type piece struct {
		parts      []geminiPartOut
		candidates int // answer tokens sent up to this chunk
	}
	var chunks []piece
	if include {
		chunks = append(chunks, piece{parts: parts[:1]})
		parts = parts[1:]
	}
	if len(a.calls) > 0 || a.text == "" {
		chunks = append(chunks, piece{parts, a.completionTokens})
	} else {
		sent := ""
		for _, p := range textPieces(a.text) {
			sent += p
			chunks = append(chunks, piece{[]geminiPartOut{{Text: &p}}, words(sent)})
		}
	}
	s := c.newStream()
	sse := c.r.URL.Query().Get("alt") == "sse"
	if sse {
		s.eol = "\r\n"
	} else {
		s.contentType = "application/json; charset=UTF-8"
	}
	for i, ch := range chunks {
		fin := ""
		if i == len(chunks)-1 {
			fin = finish
		}
		data := googleJSON(g.chunk(ch.parts, fin, ch.candidates))
		var err error
		switch {
		case sse:
			err = s.send("", data)
		case i == 0:
			err = s.write(append([]byte("["), data...))
		default:
			err = s.write(append([]byte(",\r\n"), data...))
		}
		if err != nil {
			return
		}
	}
	if !sse {
		_ = s.write([]byte("]"))
	}
}

// geminiAnswer holds what every chunk of one answer shares.
type geminiAnswer struct {
	model, id        string
	prompt, thoughts int
}

// GenerateContentResponse, fields in the API's order; zero counts are
// omitted, as proto3 JSON does.
type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata geminiUsage       `json:"usageMetadata"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

type geminiCandidate struct {
	Content      geminiContentOut `json:"content"`
	FinishReason string           `json:"finishReason,omitempty"`
	Index        int              `json:"index"`
}

type geminiContentOut struct {
	Parts []geminiPartOut `json:"parts"`
	Role  string          `json:"role"`
}

type geminiUsage struct {
	PromptTokenCount     int              `json:"promptTokenCount"`
	CandidatesTokenCount int              `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount      int              `json:"totalTokenCount"`
	PromptTokensDetails  []geminiModality `json:"promptTokensDetails"`
	ThoughtsTokenCount   int              `json:"thoughtsTokenCount,omitempty"`
}

type geminiModality struct {
	Modality   string `json:"modality"`
	TokenCount int    `json:"tokenCount"`
}

// chunk is one GenerateContentResponse; candidates counts the answer tokens
// sent so far (stream chunks carry running totals, like the API's).
func (g geminiAnswer) chunk(parts []geminiPartOut, finish string, candidates int) geminiResponse {
	return geminiResponse{
		Candidates: []geminiCandidate{{
			Content:      geminiContentOut{Parts: parts, Role: "model"},
			FinishReason: finish,
		}},
		UsageMetadata: geminiUsage{
			PromptTokenCount:     g.prompt,
			CandidatesTokenCount: candidates,
			TotalTokenCount:      g.prompt + candidates + g.thoughts,
			PromptTokensDetails:  []geminiModality{{Modality: "TEXT", TokenCount: g.prompt}},
			ThoughtsTokenCount:   g.thoughts,
		},
		ModelVersion: g.model,
		ResponseID:   g.id,
	}
}

// googleJSON is the compact JSON Google streams: a space after every colon
// between a key and its value ({"text": "hi","role": "model"}).
func googleJSON(v any) []byte {
	b := marshal(v, "")
	out := make([]byte, 0, len(b)+len(b)/8)
	inString, escaped := false, false
	for _, ch := range b {
		out = append(out, ch)
		switch {
		case escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case ch == '"':
			inString = !inString
		case !inString && ch == ':':
			out = append(out, ' ')
		}
	}
	return out
}

// lowerTypes lowercases the OpenAPI type names of a Gemini schema ("OBJECT",
// "STRING", …) so buildArgs reads them.
func lowerTypes(schema json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return schema
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, val := range t {
				if s, ok := val.(string); ok && k == "type" {
					t[k] = strings.ToLower(s)
				} else {
					t[k] = walk(val)
				}
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		}
		return x
	}
	return marshal(walk(v), "")
}

type geminiEmbedRequest struct {
	Model                string         `json:"model"`
	Content              *geminiContent `json:"content"`
	OutputDimensionality *int           `json:"outputDimensionality"`
}

func geminiEmbeddingSize(model string) int {
	if strings.HasPrefix(model, "gemini-embedding") {
		return 3072
	}
	return 768
}

func (c *call) serveGeminiEmbed(body []byte) {
	var reqs []geminiEmbedRequest
	if c.ep == epGeminiEmbed {
		var one geminiEmbedRequest
		if !c.decodeGemini(body, &one) {
			return
		}
		reqs = []geminiEmbedRequest{one}
	} else {
		var batch struct {
			Requests []geminiEmbedRequest `json:"requests"`
		}
		if !c.decodeGemini(body, &batch) {
			return
		}
		if len(batch.Requests) == 0 {
			c.fail(http.StatusBadRequest, "", "* BatchEmbedContentsRequest.requests: requests is not specified\n", "")
			return
		}
		reqs = batch.Requests
	}
	want := "models/" + c.rt.model
	var out []map[string]any
	for i, r := range reqs {
		if r.Model != "" && r.Model != want && r.Model != c.rt.model {
			c.fail(http.StatusBadRequest, "",
				fmt.Sprintf("* BatchEmbedContentsRequest.requests[%d].model: model %q differs from the model in the URL (%s)\n", i, r.Model, want), "")
			return
		}
		text := geminiText(r.Content)
		if r.Content == nil || text == "" {
			c.fail(http.StatusBadRequest, "", "* EmbedContentRequest.content: content is not specified\n", "")
			return
		}
		dims := geminiEmbeddingSize(c.rt.model)
		if d := r.OutputDimensionality; d != nil {
			if *d < 1 || *d > dims {
				c.fail(http.StatusBadRequest, "",
					fmt.Sprintf("* EmbedContentRequest.outputDimensionality: %d is not between 1 and %d\n", *d, dims), "")
				return
			}
			dims = *d
		}
		out = append(out, map[string]any{"values": c.embedding(c.rt.model, text, dims)})
	}
	if c.ep == epGeminiEmbed {
		c.ok(map[string]any{"embedding": out[0]}, "  ")
		return
	}
	c.ok(map[string]any{"embeddings": out}, "  ")
}
