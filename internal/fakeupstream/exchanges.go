package fakeupstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// The providers' count-tokens routes, as their API references answer them
// (traceforge records them as exchanges, DESIGN §13.4). The count is the
// number of words in the request's strings (its model, roles and types
// excluded), the fake's token measure everywhere:
//
//   - OpenAI POST …/v1/responses/input_tokens (a Responses request body):
//     {"object":"response.input_tokens","input_tokens":N}
//   - Anthropic POST …/v1/messages/count_tokens (a Messages body without
//     max_tokens; model and messages required): {"input_tokens":N}
//   - Gemini POST …/{v1,v1beta,v1alpha}/models/{model}:countTokens
//     ({"contents":[…]} or {"generateContentRequest":{…}}, one required):
//     {"totalTokens":N,"promptTokensDetails":[{"modality":"TEXT","tokenCount":N}]}
//
// Each checks its provider's credentials and answers bad JSON in its
// provider's error shape. Background responses (POST /v1/responses with
// "background": true) are polled on GET …/responses/{id}: see responses.go.

// serveExchange answers a count-tokens call; false for any other route.
func (c *call) serveExchange() bool {
	p := c.r.URL.Path
	if c.r.Method != http.MethodPost {
		return false
	}
	var answer func(n int) any
	var authed bool
	switch {
	case strings.HasSuffix(p, "/responses/input_tokens"):
		c.ep = epResponses // OpenAI's error shape
		authed = authorized(c.r)
		answer = func(n int) any { return fields("object", "response.input_tokens", "input_tokens", n) }
	case strings.HasSuffix(p, "/messages/count_tokens"):
		c.ep = epMessages // Anthropic's error shape
		authed = authorized(c.r)
		answer = func(n int) any { return fields("input_tokens", n) }
	case isGeminiCountTokens(p):
		c.ep = epGeminiGenerate // Google's error shape
		authed = geminiAuthorized(c.r)
		answer = func(n int) any {
			return fields("totalTokens", n, "promptTokensDetails", []any{fields("modality", "TEXT", "tokenCount", n)})
		}
	default:
		return false
	}
	switch {
	case !authed && c.ep == epGeminiGenerate:
		c.fail(http.StatusForbidden, "",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API key or other form of API consumer identity to call this API.", "")
		return true
	case !authed && c.ep == epMessages:
		c.fail(http.StatusUnauthorized, "", "x-api-key header is required", "")
		return true
	case !authed:
		c.fail(http.StatusUnauthorized, "",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "")
		return true
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(c.body))
	if err := dec.Decode(&v); err != nil || v == nil {
		c.fail(http.StatusBadRequest, "", "The request body is not valid JSON: expected a JSON object", "")
		return true
	}
	switch {
	case c.ep == epMessages && (v["model"] == nil || v["messages"] == nil):
		c.fail(http.StatusBadRequest, "", "model and messages: Field required", "")
		return true
	case c.ep == epGeminiGenerate && v["contents"] == nil && v["generateContentRequest"] == nil:
		c.fail(http.StatusBadRequest, "", "* CountTokensRequest: contents or generateContentRequest must be set.", "")
		return true
	}
	delete(v, "model")
	c.ok(answer(countWords(v)), "  ")
	return true
}

// isGeminiCountTokens matches …/{v1,v1beta,v1alpha}/models/{model}:countTokens.
func isGeminiCountTokens(p string) bool {
	i := strings.LastIndex(p, "/models/")
	if i < 0 {
		return false
	}
	prefix := p[:i]
	if !strings.HasSuffix(prefix, "/v1") && !strings.HasSuffix(prefix, "/v1beta") && !strings.HasSuffix(prefix, "/v1alpha") {
		return false
	}
	model, ok := strings.CutSuffix(p[i+len("/models/"):], ":countTokens")
	return ok && model != "" && !strings.Contains(model, "/")
}

// countWords counts the words of every string in v but the values of
// role and type members.
func countWords(v any) int {
	switch x := v.(type) {
	case string:
		return words(x)
	case map[string]any:
		n := 0
		for k, e := range x {
			if k != "role" && k != "type" {
				n += countWords(e)
			}
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += countWords(e)
		}
		return n
	}
	return 0
}
