// Package registry is the list of traceforge's wire formats and everything
// that needs the whole list: routing an HTTP call to its format, finding
// the format of a stored record, parsing a request into its key, and the
// key, key object and lineage of a stored request. Record, replay, verify,
// live, check and the Go transport talk to this package, never to a format's
// sub-package.
//
// Layers (imports point down only): cmd → cli → record/verify/migrate →
// check → provider/registry → provider/<formats> → provider → snapshot →
// schema.
package registry

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/traceforge/traceforge/internal/secret"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/anthropic"
	"github.com/traceforge/traceforge/internal/provider/azure"
	"github.com/traceforge/traceforge/internal/provider/bedrock"
	"github.com/traceforge/traceforge/internal/provider/gemini"
	"github.com/traceforge/traceforge/internal/provider/ollama"
	"github.com/traceforge/traceforge/internal/provider/openai"
	"github.com/traceforge/traceforge/internal/provider/vertex"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// providers is the explicit list of providers (DESIGN §13.1): adding a
// provider is one line here and a descriptor in its own package.
var providers = []*provider.Descriptor{
	openai.Descriptor,
	anthropic.Descriptor,
	gemini.Descriptor,
	ollama.Descriptor,
	bedrock.Descriptor,
	vertex.Descriptor,
	azure.Descriptor,
}

// formats is every provider's formats, in lookup order: Route asks each in
// turn — the formats of providers with RoutesFirst (Azure OpenAI, whose
// paths end like OpenAI's) before the others —, and among the formats of
// one provider the first is the provider's default (ForRecord, ForProvider).
var formats = func() []provider.Format {
	var out []provider.Format
	for _, first := range []bool{true, false} {
		for _, d := range providers {
			if d.RoutesFirst == first {
				out = append(out, d.Formats...)
			}
		}
	}
	return out
}()

// The snapshot layer accepts a folder per registered provider, and the
// secret rules know every provider's keys.
func init() {
	for _, d := range providers {
		snapshot.RegisterProviders(string(d.Name))
		for _, r := range d.SecretRules {
			secret.Register(r.Name, r.Prefix, r.Pattern)
		}
	}
}

// Providers returns the provider descriptors in order. The slice must not
// be modified.
func Providers() []*provider.Descriptor { return providers }

// Default is the provider of calls that name none: the first of the list,
// OpenAI, whose format every OpenAI-compatible server speaks (DESIGN §11).
func Default() *provider.Descriptor { return providers[0] }

// Provider returns the descriptor of p; nil for an unknown provider.
func Provider(p provider.Name) *provider.Descriptor {
	for _, d := range providers {
		if d.Name == p {
			return d
		}
	}
	return nil
}

// Formats returns the registered formats in lookup order. The slice must not
// be modified.
func Formats() []provider.Format { return formats }

// Route returns the format that owns an HTTP call and its key endpoint. Any
// path prefix is allowed (base URLs keep their path); a query string or
// fragment is ignored (RouteURL hands the parameters that join a key to
// the formats that ask for them). Unowned calls (moderations, images, GET
// routes, …) are ok=false.
func Route(method, path string) (provider.Format, provider.Endpoint, bool) {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	return route(method, path, nil)
}

// RouteURL is Route for a call's URL: a format whose key endpoint carries
// query parameters (provider.QueryKeyed: Azure OpenAI's api-version) gets
// the path followed by those of u's parameters, encoded in its order.
// Record and replay route every call this way.
func RouteURL(method string, u *url.URL) (provider.Format, provider.Endpoint, bool) {
	return route(method, u.Path, u.Query())
}

func route(method, path string, q url.Values) (provider.Format, provider.Endpoint, bool) {
	if name, rest, ok := SplitNamed(path); ok {
		// A named upstream speaks OpenAI's wire: the default provider's
		// formats, the endpoint behind /u/NAME (named.go).
		for _, f := range Default().Formats {
			if e, ok := f.Route(method, rest); ok {
				return f, provider.Endpoint(NamedPrefix+name) + e, true
			}
		}
		return nil, "", false
	}
	for _, f := range formats {
		p := path
		if qk, ok := f.(provider.QueryKeyed); ok && q != nil {
			p += keyQuery(qk.KeyQuery(), q)
		}
		if e, ok := f.Route(method, p); ok {
			return f, e, true
		}
	}
	return nil, "", false
}

// keyQuery is "?name=value&…" for each of names that q holds (its first
// value), "" when it holds none.
func keyQuery(names []string, q url.Values) string {
	var b strings.Builder
	for _, n := range names {
		if v := q.Get(n); v != "" {
			if b.Len() == 0 {
				b.WriteByte('?')
			} else {
				b.WriteByte('&')
			}
			b.WriteString(url.Values{n: {v}}.Encode())
		}
	}
	return b.String()
}

// ForProvider returns the provider's default format (its first in the
// list), whose error shape every call of that provider can use; nil for an
// unknown provider.
func ForProvider(p provider.Name) provider.Format {
	for _, f := range formats {
		if f.Provider() == p {
			return f
		}
	}
	return nil
}

// Lookup returns the format of a provider and key endpoint (a record's
// stored endpoint, format 1.1.0); nil when none. A stored endpoint is a path
// its format routes to itself, so formats whose endpoints are patterns
// (Gemini's /v1beta/models/{model}:generateContent) are found by Route.
func Lookup(p provider.Name, e provider.Endpoint) provider.Format {
	if _, rest, ok := SplitNamed(string(e)); ok && p == Default().Name {
		e = provider.Endpoint(rest) // a named upstream's call (named.go)
	}
	if _, _, ok := provider.SplitExchangeEndpoint(e); ok {
		return exchangeFor(p, e) // "METHOD /route": an exchange (DESIGN §13.4)
	}
	for _, f := range formats {
		if f.Provider() != p {
			continue
		}
		if f.Endpoint() == e {
			return f
		}
		if got, ok := f.Route("POST", string(e)); ok && got == e {
			return f
		}
	}
	return nil
}

// ForRecord returns the format of a stored format 1.0.0 request of
// provider p (a snapshot folder name), whose record has no endpoint: the
// first of p's formats whose OwnsRecord accepts it, else p's default format
// (DESIGN §11 "Keys and lookups": openai + "messages" → chat, openai +
// "prompt" → completions, anthropic → messages). Only the migration to
// 1.1.0 uses it; 1.1.0 records name their format by their stored endpoint
// (Lookup). nil for an unknown provider.
func ForRecord(p string, request map[string]any) provider.Format {
	var first provider.Format
	for _, f := range formats {
		if string(f.Provider()) != p {
			continue
		}
		if first == nil {
			first = f
		}
		if f.OwnsRecord(request) {
			return f
		}
	}
	return first
}

// EndpointOf100 is the key endpoint of a format 1.0.0 record (DESIGN §4,
// §11): derived from its provider and body, the rule snapshot migrate uses
// to add the endpoint field. "" for an unknown provider.
func EndpointOf100(p string, request map[string]any) provider.Endpoint {
	if f := ForRecord(p, request); f != nil {
		return f.Endpoint()
	}
	return ""
}

// ForStored returns the format of a stored record: the format of its
// provider that owns its key endpoint (Lookup), or an error naming both
// when none does.
func ForStored(p string, e provider.Endpoint) (provider.Format, error) {
	if f := Lookup(provider.Name(p), e); f != nil {
		return f, nil
	}
	if ForProvider(provider.Name(p)) == nil {
		return nil, fmt.Errorf("unknown provider %q", p)
	}
	return nil, fmt.Errorf("endpoint %q is not one of the %s endpoints this traceforge knows", e, p)
}

// ErrorFormat returns the format whose error shape suits a request that may
// not parse: the routed format, else the default format of the provider
// UpstreamOf names — except that a path ending in /messages gets
// Anthropic's shape.
func ErrorFormat(r *http.Request) provider.Format {
	if f, _, ok := Route(r.Method, r.URL.Path); ok {
		return f
	}
	p := UpstreamOf(r)
	if p == provider.OpenAI && strings.HasSuffix(r.URL.Path, "/messages") {
		p = provider.Anthropic
	}
	return ForProvider(p)
}

// UpstreamOf is the provider whose upstream a call goes to (DESIGN §12.9
// item 8): the routed format's; else /api/… goes to Ollama; a Vertex AI
// resource path (…/projects/{p}/locations/{l}/…, …/publishers/…/models/…)
// to Vertex AI; …/openai/deployments/… and …/openai/v1/… to Azure OpenAI;
// Bedrock's exchange routes (POST …/model/{id}/count-tokens) to Bedrock;
// a request with
// an x-goog-api-key header, a key= query parameter, a /v1beta/ or
// /v1alpha/ segment, or a …/v1/models/X:method path goes to Gemini; else
// Anthropic when it carries anthropic-version, else OpenAI (DESIGN §11).
func UpstreamOf(r *http.Request) provider.Name {
	path := r.URL.Path
	if _, _, ok := SplitNamed(path); ok {
		return Default().Name // a named OpenAI-compatible upstream (named.go)
	}
	if f, _, ok := Route(r.Method, path); ok {
		return f.Provider()
	}
	if strings.HasPrefix(path, "/api/") {
		return provider.Ollama
	}
	if vertex.IsPath(path) {
		return vertex.Name
	}
	if strings.Contains(path, "/openai/deployments/") || strings.Contains(path, "/openai/v1/") || azure.IsExchange(r.Method, path) {
		return azure.Name
	}
	if bedrock.IsExchange(r.Method, path) {
		return bedrock.Name
	}
	if r.Header.Get("x-goog-api-key") != "" || r.URL.Query().Has("key") ||
		strings.Contains(path+"/", "/v1beta/") || strings.Contains(path+"/", "/v1alpha/") {
		return provider.Gemini
	}
	if i := strings.LastIndex(path, "/v1/models/"); i >= 0 && strings.Contains(path[i+len("/v1/models/"):], ":") {
		return provider.Gemini
	}
	if r.Header.Get("anthropic-version") != "" {
		return provider.Anthropic
	}
	return provider.OpenAI
}

// Served lists the routes traceforge records, for messages about a path it
// does not: every registered format's key endpoint (patterns for Gemini),
// "…" standing for any base-URL prefix.
func Served() string {
	var out []string
	for _, f := range formats {
		out = append(out, "…"+string(f.Endpoint()))
	}
	return "POST " + strings.Join(out, ", ") + " (Gemini also :streamGenerateContent and :batchEmbedContents, under v1, v1beta or v1alpha; Vertex AI also :streamGenerateContent and :streamRawPredict, under v1 or v1beta1, and express mode's /v1/publishers/google/models/…; Azure OpenAI also /openai/v1/{chat/completions,embeddings} and ?api-version=…)"
}

// UnknownPath explains why method and path are not a recorded call: the
// routes that are, and — when the path differs from one only by a /v1
// segment — the base-URL fix.
func UnknownPath(method, path string) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	msg := fmt.Sprintf("%s %s is not a call traceforge records; it records %s", method, path, Served())
	switch {
	case routes(method, "/v1"+path):
		msg += fmt.Sprintf(". %s would be: the client's base URL lacks /v1 (%s)", "/v1"+path, baseURLs)
	case strings.HasPrefix(path, "/v1/") && routes(method, path[len("/v1"):]):
		msg += fmt.Sprintf(". %s would be: the client's base URL has one /v1 too many (%s)", path[len("/v1"):], baseURLs)
	}
	return msg
}

// baseURLs says which base URLs carry /v1 (DESIGN §6, §12.2).
const baseURLs = "OPENAI_BASE_URL and ANTHROPIC_VERTEX_BASE_URL end in /v1; ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, GOOGLE_VERTEX_BASE_URL, AZURE_OPENAI_ENDPOINT and OLLAMA_HOST do not"

func routes(method, path string) bool {
	_, _, ok := Route(method, path)
	return ok
}
