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
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// The methods of a models/{model}:{method} path.
const (
	MethodGenerate      = "generateContent"
	MethodStream        = "streamGenerateContent"
	MethodEmbed         = "embedContent"
	MethodBatchEmbed    = "batchEmbedContents"
	generatePattern     = "/v1beta/models/{model}:" + MethodGenerate
	embedPattern        = "/v1beta/models/{model}:" + MethodEmbed
	modelsSegment       = "/models/"
	modelPrefixInBodies = "models/"
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

// wire is what both Gemini formats share: provider, stored normalization,
// model binding, key, live body and the error shape.
type wire struct{}

// Provider is Gemini.
func (wire) Provider() provider.Name { return provider.Gemini }

// BindPath puts the path's model into the stored request (DESIGN §12.9
// item 4): "model" is added when the body has none; a body "model" other
// than the path's segment or "models/<segment>" is refused.
func (wire) BindPath(path string, request map[string]any) error {
	p, ok := ParsePath(path)
	if !ok {
		return fmt.Errorf("%s is not a Gemini models/{model}:{method} path", path)
	}
	m, present := request["model"]
	if !present || m == nil {
		request["model"] = p.Model
		return nil
	}
	if s, ok := m.(string); ok && (s == p.Model || s == modelPrefixInBodies+p.Model) {
		return nil
	}
	return fmt.Errorf("%w: the body's model %s differs from the model in the path (%s); send the model in the path only", provider.ErrContradictsPath, snapshotQuote(m), p.Model)
}

func snapshotQuote(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return provider.TypeName(v)
}

// NormalizeStored drops explicit top-level nulls (DESIGN §12.9 item 2).
func (wire) NormalizeStored(request map[string]any) { provider.DropTopLevelNulls(request) }

// KeyRequest is a copy of the stored request: Gemini's key-only list is
// empty (streaming is in the path, not the body).
func (wire) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		r[k] = v
	}
	return r
}

// LiveBody is the request without the "model" the path carries
// (DESIGN §12.9 item 4: --live posts it to the stored endpoint).
func (wire) LiveBody(request map[string]any) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		if k != "model" {
			r[k] = v
		}
	}
	return r
}

// SynthesizeBody is nil: there are no body-less Gemini snapshots (format
// 0.9.0 had no Gemini).
func (wire) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any { return nil }

// googleCodes maps the google.rpc.Code names traceforge answers with to
// their HTTP status.
var googleCodes = map[string]int{
	"INVALID_ARGUMENT":  http.StatusBadRequest,
	"PERMISSION_DENIED": http.StatusForbidden,
	"NOT_FOUND":         http.StatusNotFound,
	"INTERNAL":          http.StatusInternalServerError,
	"UNAVAILABLE":       http.StatusServiceUnavailable,
}

// ErrorBody is Google's shape {"error":{"code","message","status"}}: typ is
// the status name (ErrorType), code is unused.
func (wire) ErrorBody(typ, _, message string) []byte {
	code, ok := googleCodes[typ]
	if !ok {
		code = http.StatusBadRequest
	}
	return provider.MarshalOrdered("error", provider.Ordered("code", code, "message", message, "status", typ))
}

// ErrorType maps a status to a google.rpc.Code name. Google answers an
// unreachable backend with UNAVAILABLE; traceforge's 502 uses it too.
func (wire) ErrorType(status int) string {
	switch status {
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusInternalServerError:
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// MissError is NOT_FOUND (Google errors have no code besides the status).
func (wire) MissError() (typ, code string) { return "NOT_FOUND", "" }

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
