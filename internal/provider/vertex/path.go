// Package vertex is Google Vertex AI (DESIGN §13.5): the Gemini models
// (publishers/google: generateContent and streamGenerateContent,
// countTokens, embedContent, predict) in the Gemini wire
// (provider.GeminiGenerate, provider.GeminiEmbed), and Claude
// (publishers/anthropic: rawPredict and streamRawPredict) in Anthropic's
// Messages wire (provider.AnthropicWire), under
//
//	…/{v1,v1beta1}/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}
//
// and, for express mode (an API key instead of OAuth),
//
//	…/{v1,v1beta1}/publishers/google/models/{model}:{method}
//
// The model is in the path, never in the body: the stored request is the
// body plus "model" from the path (BindPath), as for the Gemini API. The
// key endpoint is the path from its version segment on, project and
// location kept (they pick the resource and the upstream), without the
// query, with the streaming methods written as their plain ones
// (:streamGenerateContent as :generateContent, :streamRawPredict as
// :rawPredict). Credentials — an OAuth access token (Authorization: Bearer
// ya29.…), an API key (x-goog-api-key or key=) — are forwarded upstream
// and never stored.
package vertex

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Name is Vertex AI's snapshot folder.
const Name provider.Name = "vertex"

// The publishers and methods of a Vertex AI model path.
const (
	PublisherGoogle    = "google"
	PublisherAnthropic = "anthropic"

	MethodGenerate     = "generateContent"
	MethodStream       = "streamGenerateContent"
	MethodCountTokens  = "countTokens"
	MethodEmbed        = "embedContent"
	MethodPredict      = "predict"
	MethodRawPredict   = "rawPredict"
	MethodStreamRawPre = "streamRawPredict"
)

// versions are the API versions of Vertex AI's paths.
var versions = []string{"v1", "v1beta1"}

// Path is a parsed Vertex AI model path.
type Path struct {
	Version   string // "v1" or "v1beta1"
	Project   string // "" in express mode
	Location  string // "" in express mode
	Publisher string // "google" or "anthropic"
	Model     string
	Method    string
}

// ParsePath splits …/{version}/[projects/{p}/locations/{l}/]publishers/{publisher}/models/{model}:{method}
// (any prefix before the version segment; no query). ok is false for any
// other path; express mode (no project) is Google's models only.
func ParsePath(path string) (Path, bool) {
	const pubs = "/publishers/"
	i := strings.LastIndex(path, pubs)
	if i < 0 {
		return Path{}, false
	}
	var p Path
	pub, rest, ok := strings.Cut(path[i+len(pubs):], "/models/")
	if !ok || (pub != PublisherGoogle && pub != PublisherAnthropic) {
		return Path{}, false
	}
	model, method, ok := strings.Cut(rest, ":")
	if !ok || model == "" || strings.ContainsAny(model, "/:") || method == "" {
		return Path{}, false
	}
	p.Publisher, p.Model, p.Method = pub, model, method
	prefix := path[:i]
	if j := strings.LastIndex(prefix, "/projects/"); j >= 0 {
		proj, loc, ok := strings.Cut(prefix[j+len("/projects/"):], "/locations/")
		if !ok || !segment(proj) || !segment(loc) {
			return Path{}, false
		}
		p.Project, p.Location, prefix = proj, loc, prefix[:j]
	} else if pub != PublisherGoogle {
		return Path{}, false
	}
	for _, v := range versions {
		if strings.HasSuffix(prefix, "/"+v) {
			p.Version = v
		}
	}
	if p.Version == "" {
		return Path{}, false
	}
	return p, true
}

// segment reports whether s is one non-empty path segment.
func segment(s string) bool { return s != "" && !strings.ContainsAny(s, "/:") }

// Express reports whether the path is express mode's (no project).
func (p Path) Express() bool { return p.Project == "" }

// Endpoint is the key endpoint of the path: from the version segment on,
// with the streaming methods written as their plain ones.
func (p Path) Endpoint() provider.Endpoint {
	m := p.Method
	switch m {
	case MethodStream:
		m = MethodGenerate
	case MethodStreamRawPre:
		m = MethodRawPredict
	}
	s := "/" + p.Version
	if !p.Express() {
		s += "/projects/" + p.Project + "/locations/" + p.Location
	}
	return provider.Endpoint(s + "/publishers/" + p.Publisher + "/models/" + p.Model + ":" + m)
}

// route claims POST paths of publisher whose method is one of methods.
func route(method, path, publisher string, methods ...string) (provider.Endpoint, bool) {
	if method != http.MethodPost {
		return "", false
	}
	p, ok := ParsePath(path)
	if !ok || p.Publisher != publisher {
		return "", false
	}
	for _, m := range methods {
		if p.Method == m {
			return p.Endpoint(), true
		}
	}
	return "", false
}

// bindPath puts the path's model into the stored request
// (provider.GeminiBindModel: added when the body has none, refused when
// the body names another).
func bindPath(path string, request map[string]any) error {
	p, ok := ParsePath(path)
	if !ok {
		return fmt.Errorf("%s is not a Vertex AI publishers/{publisher}/models/{model}:{method} path", path)
	}
	return provider.GeminiBindModel(p.Model, request)
}

// Location is the location a path of Vertex AI names: its
// locations/{location} segment, "global" in express mode and for a path
// without one.
func Location(path string) string {
	const seg = "/locations/"
	i := strings.Index(path, seg)
	if i < 0 {
		return "global"
	}
	loc, _, _ := strings.Cut(path[i+len(seg):], "/")
	if loc == "" {
		return "global"
	}
	return loc
}

// IsPath reports whether path is shaped like any Vertex AI resource path
// (…/{version}/projects/{p}/locations/{l}/… or a model path), served or
// not: the calls whose upstream is Vertex AI's.
func IsPath(path string) bool {
	if _, ok := ParsePath(path); ok {
		return true
	}
	for _, v := range versions {
		i := strings.Index(path, "/"+v+"/projects/")
		if i >= 0 && strings.Contains(path[i:], "/locations/") {
			return true
		}
	}
	return false
}
