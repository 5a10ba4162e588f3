// Package replay answers LLM calls from a checked snapshot set: it parses an
// incoming HTTP request into its provider, endpoint, stored-normalized body,
// stored request headers and full request key (Parse), indexes a set by key
// (Index), and writes a snapshot's recorded response as JSON or as a
// provider-correct SSE stream (Respond). It is shared by `traceforge verify`
// (the replay server) and `traceforge record --only-missing` (hits are served
// from the set without contacting the upstream).
//
// It never touches the network and never reads the snapshot folder itself:
// callers hand it the in-memory set validated by check.CheckSet.
package replay

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Sentinel errors of Parse.
var (
	// ErrNotLLMCall: the method and path are not a call format 1.0.0 covers
	// (chat completions, completions, messages).
	ErrNotLLMCall = errors.New("not an LLM call traceforge covers")
	// ErrBadRequest: the body is not a JSON object traceforge can key
	// (invalid JSON, duplicate keys, integers beyond 2^53, …).
	ErrBadRequest = errors.New("request body cannot be keyed")
)

// Request is an incoming LLM call, parsed the way record, replay and live
// all see it.
type Request struct {
	Provider provider.Name
	// Endpoint is the canonical endpoint of the path the application called.
	Endpoint provider.Endpoint
	// Body is the decoded request with the stored normalization applied
	// (snapshot.NormalizeStored): exactly what a snapshot's "request" holds.
	Body map[string]any
	// Headers holds the stored request headers (anthropic-version,
	// anthropic-beta) when sent; nil when none. They join the key.
	Headers map[string]any
	// Key is the full 64-hex request key.
	Key string
	// Stream is true iff the body has "stream": true.
	Stream bool
	// IncludeUsage is true iff the body has stream_options.include_usage: true.
	IncludeUsage bool
	// Raw is the body as received.
	Raw []byte
}

// ID is the 12-character snapshot id of the request.
func (r *Request) ID() string { return snapshot.IDOf(r.Key) }

// Classify reports the provider and endpoint of method and path, like
// provider.Classify.
func Classify(method, path string) (provider.Name, provider.Endpoint, bool) {
	return provider.Classify(method, path)
}

// StoredHeaders returns the request headers a snapshot stores (DESIGN §11
// "Keys and lookups"): anthropic-version and anthropic-beta, when sent, with
// repeated values joined by ",". nil when none was sent.
func StoredHeaders(h http.Header) map[string]any {
	var out map[string]any
	for _, name := range snapshot.RequestHeaderNames {
		vs := h.Values(name)
		if len(vs) == 0 {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = strings.Join(vs, ",")
	}
	return out
}

// Parse turns a request's method, path, headers and body into a Request.
// The body is decoded strictly (snapshot.Decode), the stored normalization
// is applied, and the key is computed from the result. Errors wrap
// ErrNotLLMCall or ErrBadRequest.
func Parse(method, path string, header http.Header, body []byte) (*Request, error) {
	p, e, ok := provider.Classify(method, path)
	if !ok {
		return nil, fmt.Errorf("%w: %s %s", ErrNotLLMCall, method, path)
	}
	v, err := snapshot.Decode(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the body is not a JSON object", ErrBadRequest)
	}
	req := &Request{Provider: p, Endpoint: e, Body: m, Raw: body, Headers: StoredHeaders(header)}
	req.Stream, _ = m["stream"].(bool)
	if so, ok := m["stream_options"].(map[string]any); ok {
		req.IncludeUsage, _ = so["include_usage"].(bool)
	}
	snapshot.NormalizeStored(string(p), m)
	req.Key, err = snapshot.RequestKey(string(p), m, req.Headers)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return req, nil
}

// ParseHTTP reads r's body (the caller caps its size, e.g. with serve.Guard)
// and parses it. The body is consumed.
func ParseHTTP(r *http.Request) (*Request, error) {
	if _, _, ok := provider.Classify(r.Method, r.URL.Path); !ok {
		return nil, fmt.Errorf("%w: %s %s", ErrNotLLMCall, r.Method, r.URL.Path)
	}
	body, err := readAll(r)
	if err != nil {
		return nil, err
	}
	return Parse(r.Method, r.URL.Path, r.Header, body)
}

// ProviderOf guesses the provider whose error shape suits a request that
// could not be parsed: Anthropic when it carries anthropic-version or its
// path ends in /messages, else OpenAI (DESIGN §11: unknown paths go to the
// Anthropic upstream when the request carries anthropic-version).
func ProviderOf(r *http.Request) provider.Name {
	if p, _, ok := provider.Classify(r.Method, r.URL.Path); ok {
		return p
	}
	if r.Header.Get("anthropic-version") != "" || strings.HasSuffix(r.URL.Path, "/messages") {
		return provider.Anthropic
	}
	return provider.OpenAI
}
