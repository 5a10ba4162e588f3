package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Vertex AI (DESIGN §13.5): the Gemini models under
// …/{v1,v1beta1}/projects/{p}/locations/{l}/publishers/google/models/{m}:{method}
// (and express mode's …/v1/publishers/google/models/{m}:{method}) answer as
// the Gemini API does, plus :countTokens and :predict (the text-embedding
// models); Claude under …/publishers/anthropic/models/{m}:{rawPredict,streamRawPredict}
// answers as the Messages API, with the model from the path and
// "anthropic_version" required in the body (a "model" in the body is
// refused, as Vertex AI does). Authentication: an OAuth bearer token or, in
// express mode, an API key (x-goog-api-key or key=); else 401
// UNAUTHENTICATED in Google's shape.

// routeVertex matches a Vertex AI model path.
func routeVertex(p string) (routed, bool) {
	i := strings.LastIndex(p, "/publishers/")
	if i < 0 {
		return routed{}, false
	}
	prefix := p[:i]
	if j := strings.LastIndex(prefix, "/projects/"); j >= 0 {
		prefix = prefix[:j]
	}
	if !strings.HasSuffix(prefix, "/v1") && !strings.HasSuffix(prefix, "/v1beta1") {
		return routed{}, false
	}
	pub, rest, ok := strings.Cut(p[i+len("/publishers/"):], "/models/")
	if !ok {
		return routed{}, false
	}
	model, method, ok := strings.Cut(rest, ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return routed{}, false
	}
	var ep endpoint
	switch pub + ":" + method {
	case "google:generateContent":
		ep = epGeminiGenerate
	case "google:streamGenerateContent":
		ep = epGeminiStream
	case "google:embedContent":
		ep = epGeminiEmbed
	case "google:countTokens":
		ep = epVertexCountTokens
	case "google:predict":
		ep = epVertexPredict
	case "anthropic:rawPredict", "anthropic:streamRawPredict":
		ep = epVertexRawPredict
	default:
		return routed{}, false
	}
	return routed{ep: ep, model: model, vertex: true}, true
}

// vertexAuthorized: a bearer token, or an express-mode API key.
func vertexAuthorized(r *http.Request) bool {
	return authorized(r) || geminiAuthorized(r)
}

// failVertexAuth is Google's 401.
func (c *call) failVertexAuth() {
	c.setCommonHeaders()
	c.writeJSON(http.StatusUnauthorized, googleError{Error: googleErrorBody{Code: http.StatusUnauthorized,
		Message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
		Status:  "UNAUTHENTICATED"}}, "  ")
}

// serveVertexCountTokens answers {"totalTokens", "totalBillableCharacters",
// "promptTokensDetails"} for the request's contents.
func (c *call) serveVertexCountTokens(body []byte) {
	var req geminiRequest
	if !c.decodeGemini(body, &req) {
		return
	}
	tokens, chars := 0, 0
	for i := range req.Contents {
		t := geminiText(&req.Contents[i])
		tokens += words(t)
		chars += len(strings.ReplaceAll(t, " ", ""))
	}
	c.ok(map[string]any{
		"totalTokens":             tokens,
		"totalBillableCharacters": chars,
		"promptTokensDetails":     []any{map[string]any{"modality": "TEXT", "tokenCount": tokens}},
	}, "  ")
}

// serveVertexPredict answers a text-embedding model's predict:
// {"predictions":[{"embeddings":{"statistics":{…},"values":[…]}}],"metadata":{…}}.
func (c *call) serveVertexPredict(body []byte) {
	var req struct {
		Instances []struct {
			Content string `json:"content"`
		} `json:"instances"`
		Parameters struct {
			OutputDimensionality *int `json:"outputDimensionality"`
		} `json:"parameters"`
	}
	if !c.decodeGemini(body, &req) {
		return
	}
	if len(req.Instances) == 0 {
		c.fail(http.StatusBadRequest, "", "instances: at least one instance is required", "")
		return
	}
	dims := geminiEmbeddingSize(c.rt.model)
	if d := req.Parameters.OutputDimensionality; d != nil && *d >= 1 && *d <= dims {
		dims = *d
	}
	preds := make([]any, 0, len(req.Instances))
	chars := 0
	for _, in := range req.Instances {
		chars += len(in.Content)
		preds = append(preds, map[string]any{"embeddings": map[string]any{
			"statistics": map[string]any{"truncated": false, "token_count": words(in.Content)},
			"values":     c.embedding(c.rt.model, in.Content, dims),
		}})
	}
	c.ok(map[string]any{"predictions": preds, "metadata": map[string]any{"billableCharacterCount": chars}}, "  ")
}

// serveVertexRawPredict serves Claude on Vertex AI: the Messages API with
// the model from the path.
func (c *call) serveVertexRawPredict(body []byte) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		c.decodeError(err)
		return
	}
	if _, ok := m["anthropic_version"]; !ok {
		c.fail(http.StatusBadRequest, "", "anthropic_version: Field required", "")
		return
	}
	if _, ok := m["model"]; ok {
		c.fail(http.StatusBadRequest, "", "model: Extra inputs are not permitted", "")
		return
	}
	delete(m, "anthropic_version")
	model, _ := json.Marshal(c.rt.model)
	m["model"] = model
	b, err := json.Marshal(m)
	if err != nil {
		c.fail(http.StatusBadRequest, "", fmt.Sprintf("invalid body: %v", err), "")
		return
	}
	c.serveMessages(b)
}

// azureAuthorized: Azure OpenAI takes its key in api-key (or an Entra ID
// bearer token).
func azureAuthorized(r *http.Request) bool {
	return strings.TrimSpace(r.Header.Get("api-key")) != "" || authorized(r)
}

// isAzure reports an Azure OpenAI path.
func isAzure(p string) bool {
	return strings.Contains(p, "/openai/deployments/") || strings.Contains(p, "/openai/v1/")
}
