// Package azure is Azure OpenAI (DESIGN §13.5): OpenAI's wire on Azure's
// routes,
//
//	…/openai/deployments/{deployment}/{chat/completions,completions,embeddings}?api-version=…
//	…/openai/v1/{chat/completions,responses,embeddings}
//
// with the machinery of OpenAI's formats (provider.OpenAIWire,
// provider.OpenAIEmbeddings, provider.ResponsesWire). The key endpoint is
// the path from /openai/ on, followed by ?api-version=… when the call has
// one (provider.QueryKeyed: a call under another API version is another
// call): "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21".
// The key travels in the api-key header (or as an Entra ID bearer token);
// it is forwarded to the Azure resource and never stored.
package azure

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Name is Azure OpenAI's snapshot folder.
const Name provider.Name = "azure"

// APIVersion is the query parameter that joins the key.
const APIVersion = "api-version"

// The operations of Azure's routes.
const (
	opChat        = "chat/completions"
	opCompletions = "completions"
	opEmbeddings  = "embeddings"
	opResponses   = "responses"
)

// Path is a parsed Azure OpenAI path.
type Path struct {
	Deployment string // "" on the /openai/v1 routes
	Op         string // "chat/completions", "completions", "embeddings", "responses"
	APIVersion string // the api-version query parameter, "" when absent
}

// ParsePath splits …/openai/deployments/{d}/{op} or …/openai/v1/{op},
// optionally followed by ?api-version=V (the only query a key endpoint
// holds). ok is false for any other path.
func ParsePath(path string) (Path, bool) {
	var p Path
	path, query, hasQuery := strings.Cut(path, "?")
	if hasQuery {
		q, err := url.ParseQuery(query)
		if err != nil || len(q) != 1 || len(q[APIVersion]) != 1 || q.Get(APIVersion) == "" {
			return Path{}, false
		}
		p.APIVersion = q.Get(APIVersion)
	}
	i := strings.LastIndex(path, "/openai/")
	if i < 0 {
		return Path{}, false
	}
	rest := path[i+len("/openai/"):]
	switch {
	case strings.HasPrefix(rest, "deployments/"):
		d, op, ok := strings.Cut(rest[len("deployments/"):], "/")
		if !ok || d == "" || strings.Contains(d, ":") {
			return Path{}, false
		}
		switch op {
		case opChat, opCompletions, opEmbeddings:
		default:
			return Path{}, false
		}
		p.Deployment, p.Op = d, op
	case strings.HasPrefix(rest, "v1/"):
		switch op := rest[len("v1/"):]; op {
		case opChat, opResponses, opEmbeddings:
			p.Op = op
		default:
			return Path{}, false
		}
	default:
		return Path{}, false
	}
	return p, true
}

// Endpoint is the key endpoint: /openai/deployments/{d}/{op} or
// /openai/v1/{op}, with ?api-version=V when the call had one.
func (p Path) Endpoint() provider.Endpoint {
	s := "/openai/v1/" + p.Op
	if p.Deployment != "" {
		s = "/openai/deployments/" + p.Deployment + "/" + p.Op
	}
	if p.APIVersion != "" {
		s += "?" + url.Values{APIVersion: {p.APIVersion}}.Encode()
	}
	return provider.Endpoint(s)
}

// route claims POST paths whose operation is op.
func route(method, path, op string) (provider.Endpoint, bool) {
	if method != http.MethodPost {
		return "", false
	}
	p, ok := ParsePath(path)
	if !ok || p.Op != op {
		return "", false
	}
	return p.Endpoint(), true
}

// bindDeployment puts the deployment of a deployment path into the stored
// request as "model" when the body has none (the SDKs send both; a
// request made by hand may name the model only in the path).
func bindDeployment(path string, request map[string]any) error {
	if p, ok := ParsePath(path); ok && p.Deployment != "" {
		if m, present := request["model"]; !present || m == nil {
			request["model"] = p.Deployment
		}
	}
	return nil
}

// query is the api-version the key endpoints hold (provider.QueryKeyed).
type query struct{}

// KeyQuery names api-version.
func (query) KeyQuery() []string { return []string{APIVersion} }
