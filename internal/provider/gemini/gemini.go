// Package gemini is the Gemini API's native wire format (DESIGN §12.2):
// POST …/{v1,v1beta,v1alpha}/models/{model}:generateContent and
// :streamGenerateContent (one key; SSE with ?alt=sse), served by Generate,
// and :embedContent and :batchEmbedContents, served by Embed.
//
// The model is part of the path, not of the body: the stored request is the
// body plus "model" from the path (BindPath; DESIGN §12.9 item 4), and the
// key endpoint is the path from its version segment on, without the query,
// with :streamGenerateContent written as :generateContent
// ("/v1beta/models/gemini-2.5-flash:generateContent"). The API key travels
// in the x-goog-api-key header or the key query parameter; neither is part
// of the request a snapshot stores or of its key.
package gemini

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// The methods of a models/{model}:{method} path.
const (
	MethodGenerate   = "generateContent"
	MethodStream     = "streamGenerateContent"
	MethodEmbed      = "embedContent"
	MethodBatchEmbed = "batchEmbedContents"
	generatePattern  = "/v1beta/models/{model}:" + MethodGenerate
	embedPattern     = "/v1beta/models/{model}:" + MethodEmbed
	modelsSegment    = "/models/"
)

// versions are the API version segments a Gemini path may carry
// (DESIGN §12.8: v1, v1beta and v1alpha).
var versions = []string{"v1", "v1beta", "v1alpha"}

// Path is a parsed Gemini model path.
type Path struct {
	Version string // "v1", "v1beta" or "v1alpha"
	Model   string // the segment after models/
	Method  string // generateContent, streamGenerateContent, …
}

// ParsePath splits …/{version}/models/{model}:{method} (any prefix before
// the version segment; no query). ok is false for any other path.
func ParsePath(path string) (Path, bool) {
	i := strings.LastIndex(path, modelsSegment)
	if i < 0 {
		return Path{}, false
	}
	prefix := path[:i]
	var p Path
	for _, v := range versions {
		if strings.HasSuffix(prefix, "/"+v) {
			p.Version = v
		}
	}
	if p.Version == "" {
		return Path{}, false
	}
	model, method, ok := strings.Cut(path[i+len(modelsSegment):], ":")
	if !ok || model == "" || strings.ContainsAny(model, "/:") || method == "" {
		return Path{}, false
	}
	p.Model, p.Method = model, method
	return p, true
}

// Endpoint is the key endpoint of the path: /{version}/models/{model}:{method}
// with streamGenerateContent keyed as generateContent.
func (p Path) Endpoint() provider.Endpoint {
	m := p.Method
	if m == MethodStream {
		m = MethodGenerate
	}
	return provider.Endpoint("/" + p.Version + modelsSegment + p.Model + ":" + m)
}

// bindPath puts the path's model into the stored request (DESIGN §12.9
// item 4; provider.GeminiBindModel): "model" is added when the body has
// none; a body "model" other than the path's segment or
// "models/<segment>" is refused.
func bindPath(path string, request map[string]any) error {
	p, ok := ParsePath(path)
	if !ok {
		return fmt.Errorf("%s is not a Gemini models/{model}:{method} path", path)
	}
	return provider.GeminiBindModel(p.Model, request)
}

// route claims POST Gemini paths whose method is one of methods.
func route(method, path string, methods ...string) (provider.Endpoint, bool) {
	if method != http.MethodPost {
		return "", false
	}
	p, ok := ParsePath(path)
	if !ok {
		return "", false
	}
	for _, m := range methods {
		if p.Method == m {
			return p.Endpoint(), true
		}
	}
	return "", false
}
