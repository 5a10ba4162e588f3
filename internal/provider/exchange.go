package provider

import (
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// ExchangeRoute is a provider route around the LLM call that traceforge
// records as an exchange (DESIGN §13.4 "Generic exchanges"): count-tokens,
// files, vector stores, conversations, response polling, batches, models.
// Its answer is kept as the provider sent it and replayed in order; no
// LLM-derived field is read from it.
type ExchangeRoute struct {
	// Methods are the HTTP methods of the route ("GET", "POST", "DELETE").
	Methods []string
	// Path is the route's pattern, matched against the end of a called
	// path (any base-URL prefix is allowed, as for the LLM routes):
	// literal segments, "{name}" for one non-empty segment (an id, kept in
	// the endpoint), "{name}:verb" for a segment ending in ":verb"
	// (Gemini's models/{model}:countTokens), and "{name+}" for one
	// non-empty segment that may hold ":" (Bedrock's model ids,
	// anthropic.claude-3-haiku-20240307-v1:0).
	Path string
	// Body, when set, makes the route an exchange only for the request
	// bodies it accepts, even on an LLM call's route: OpenAI's POST
	// /v1/responses with "background": true answers "queued" with no
	// output and no usage — the call's answer comes from the polls.
	Body func(body []byte) bool
}

// MatchExchange returns the called part of path that one of routes matches
// for method (the endpoint's route: ids kept, the application's base-URL
// prefix dropped); ok is false when none does. path has no query.
func MatchExchange(routes []ExchangeRoute, method, path string) (route string, ok bool) {
	return matchExchange(routes, method, path, func(r *ExchangeRoute) bool { return r.Body == nil })
}

// matchExchange is MatchExchange over the routes keep accepts.
func matchExchange(routes []ExchangeRoute, method, path string, keep func(*ExchangeRoute) bool) (route string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := range routes {
		r := &routes[i]
		if !slices.Contains(r.Methods, method) || !keep(r) {
			continue
		}
		pat := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
		if len(pat) > len(segs) {
			continue
		}
		tail := segs[len(segs)-len(pat):]
		if matchSegments(pat, tail) {
			return "/" + strings.Join(tail, "/"), true
		}
	}
	return "", false
}

func matchSegments(pat, segs []string) bool {
	for i, p := range pat {
		s := segs[i]
		if s == "" {
			return false
		}
		if !strings.HasPrefix(p, "{") {
			if p != s {
				return false
			}
			continue
		}
		end := strings.IndexByte(p, '}')
		if end < 0 {
			return false
		}
		if verb := p[end+1:]; verb != "" {
			if !strings.HasSuffix(s, verb) || len(s) == len(verb) {
				return false
			}
		} else if strings.Contains(s, ":") && p[end-1] != '+' {
			return false // {id} never takes a segment that names a method
		}
	}
	return true
}

// ExchangeEndpoint is an exchange record's endpoint: "METHOD /route".
func ExchangeEndpoint(method, route string) Endpoint { return Endpoint(method + " " + route) }

// SplitExchangeEndpoint splits an exchange endpoint into its method and
// route; ok is false for an LLM call's endpoint (a path).
func SplitExchangeEndpoint(e Endpoint) (method, route string, ok bool) {
	m, r, found := strings.Cut(string(e), " ")
	if !found || m == "" || !strings.HasPrefix(r, "/") || strings.ToUpper(m) != m {
		return "", "", false
	}
	return m, r, true
}

// CredentialQuery are query parameters that carry credentials on every
// provider's routes; they are forwarded, never stored (Gemini's key=).
var CredentialQuery = []string{"key", "api_key", "api-key", "access_token"}

// ExchangeRequest is the stored request of an exchange (DESIGN §13.4):
// {method, path, query, body | body_text | body_b64}. query holds the
// called URL's parameters (each name's values in order) without the
// credential ones; a JSON body is kept as JSON, other UTF-8 text as
// body_text, anything else (multipart uploads with binary parts) as
// body_b64 — the exact bytes either way. An empty body is absent.
func ExchangeRequest(method, route string, query url.Values, body []byte) map[string]any {
	req := map[string]any{"method": method, "path": route}
	q := map[string]any{}
	for name, vals := range query {
		if slices.Contains(CredentialQuery, strings.ToLower(name)) {
			continue
		}
		vs := make([]any, len(vals))
		for i, v := range vals {
			vs[i] = v
		}
		q[name] = vs
	}
	if len(q) > 0 {
		req["query"] = q
	}
	maps.Copy(req, ExchangeBody(body))
	return req
}

// ExchangeBody is how an exchange keeps a body (request or answer): {}
// when empty, {"body": v} when it is a JSON object or array snapshots hold
// exactly, {"body_text": s} for other UTF-8 text, {"body_b64": s} for
// other bytes. ExchangeBytes is its inverse.
func ExchangeBody(b []byte) map[string]any {
	if len(b) == 0 {
		return map[string]any{}
	}
	if c := firstNonSpace(b); c == '{' || c == '[' {
		if v, err := snapshot.Decode(b); err == nil && exactJSON(b, v) {
			return map[string]any{"body": v}
		}
	}
	if utf8.Valid(b) && !strings.ContainsRune(string(b), 0) {
		return map[string]any{"body_text": string(b)}
	}
	return map[string]any{"body_b64": base64.StdEncoding.EncodeToString(b)}
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// exactJSON reports whether the decoded value v can be stored and sent back
// meaning exactly what b does: every number survives JCS (integers beyond
// 2^53 do not: they are kept as text instead).
func exactJSON(b []byte, v any) bool {
	return snapshot.AsDecoded(map[string]any{"v": v}) == nil
}

// ErrExchangeBody: a stored exchange body is none of body, body_text,
// body_b64 (or two of them).
var ErrExchangeBody = errors.New("an exchange body must be one of body, body_text, body_b64")

// ExchangeBytes returns the bytes a stored exchange body (request or
// response object m) stands for: JSON bodies in canonical form (RFC
// 8785), text and base64 bodies exactly. ok is false when m holds none.
func ExchangeBytes(m map[string]any) (b []byte, isJSON bool, err error) {
	n := 0
	for _, k := range []string{"body", "body_text", "body_b64"} {
		if _, ok := m[k]; ok {
			n++
		}
	}
	if n > 1 {
		return nil, false, ErrExchangeBody
	}
	if v, ok := m["body"]; ok {
		b, err := snapshot.Canonical(v)
		return b, true, err
	}
	if s, ok := m["body_text"].(string); ok {
		return []byte(s), false, nil
	}
	if s, ok := m["body_b64"].(string); ok {
		b, err := base64.StdEncoding.DecodeString(s)
		return b, false, err
	}
	return nil, false, nil
}

// Exchange is the wire format of a provider's exchange routes (DESIGN
// §13.4): one per provider, built from its descriptor's ExchangeRoutes by
// NewExchange. Its records have no LLM-derived fields: no content,
// finish_reason, tool_calls or tokens_used, and no determinism policy
// (there is nothing sampled). Record and replay handle its answers
// themselves (status and bytes as sent); the Format methods about LLM
// answers are never asked of it.
type Exchange struct {
	name       Name
	routes     []ExchangeRoute
	errs       Format // the provider's default format: its error shape
	bodyRoutes bool   // some routes have a Body
}

// NewExchange returns the exchange format of provider name, whose errors
// take the shape of errs.
func NewExchange(name Name, routes []ExchangeRoute, errs Format) *Exchange {
	x := &Exchange{name: name, routes: routes, errs: errs}
	for _, r := range routes {
		x.bodyRoutes = x.bodyRoutes || r.Body != nil
	}
	return x
}

// IsExchange reports whether f is an exchange format.
func IsExchange(f Format) bool {
	_, ok := f.(*Exchange)
	return ok
}

// ExchangeSchema is the record definition of every exchange record.
const ExchangeSchema = "#/$defs/exchangeRecord"

func (x *Exchange) Provider() Name     { return x.name }
func (x *Exchange) Endpoint() Endpoint { return "METHOD /route" }

// Route matches method and path against the provider's exchange routes;
// the endpoint is "METHOD /route".
func (x *Exchange) Route(method, path string) (Endpoint, bool) {
	if r, ok := MatchExchange(x.routes, method, path); ok {
		return ExchangeEndpoint(method, r), true
	}
	return "", false
}

// RouteBody matches method, path and body against the routes that are
// exchanges only for some bodies (ExchangeRoute.Body); it is asked of
// calls an LLM format routes.
func (x *Exchange) RouteBody(method, path string, body []byte) (Endpoint, bool) {
	if !x.bodyRoutes {
		return "", false
	}
	if r, ok := matchExchange(x.routes, method, path, func(r *ExchangeRoute) bool { return r.Body != nil && r.Body(body) }); ok {
		return ExchangeEndpoint(method, r), true
	}
	return "", false
}

// Owns reports whether a stored endpoint is one of the provider's exchange
// routes.
func (x *Exchange) Owns(e Endpoint) bool {
	m, r, ok := SplitExchangeEndpoint(e)
	if !ok {
		return false
	}
	got, ok := MatchExchange(x.routes, m, r)
	if !ok && x.bodyRoutes {
		// A stored request of a route with a Body: its body was accepted
		// when it was recorded.
		got, ok = matchExchange(x.routes, m, r, func(r *ExchangeRoute) bool { return r.Body != nil })
	}
	return ok && got == r
}

// Pattern is the pattern of the route a stored endpoint matches:
// "GET /v1/responses/{id}" for "GET /v1/responses/resp_1".
func (x *Exchange) Pattern(e Endpoint) (string, bool) {
	m, path, ok := SplitExchangeEndpoint(e)
	if !ok {
		return "", false
	}
	for i := range x.routes {
		r := &x.routes[i]
		if got, ok := matchExchange(x.routes[i:i+1], m, path, func(*ExchangeRoute) bool { return true }); ok && got == path {
			return m + " " + r.Path, true
		}
	}
	return "", false
}

func (x *Exchange) OwnsRecord(map[string]any) bool      { return false }
func (x *Exchange) Streams(string, map[string]any) bool { return false }
func (x *Exchange) NormalizeStored(map[string]any)      {}

// KeyRequest is the stored request itself (method, path, query, body): an
// exchange is keyed by exactly what was sent, but for the random boundary
// of a multipart upload, keyed as KeyBoundary (keyMultipart).
func (x *Exchange) KeyRequest(request map[string]any, _ *KeyContext) map[string]any {
	return maps.Clone(keyMultipart(request))
}

// LiveBody is nil: an exchange is not an LLM call, --live does not send it.
func (x *Exchange) LiveBody(map[string]any) map[string]any { return nil }

// Fields: an exchange has no LLM-derived fields.
func (x *Exchange) Fields(map[string]any) (snapshot.Fields, error) {
	return snapshot.Fields{NoText: true, NoTokens: true}, nil
}

func (x *Exchange) NewAssembler() Assembler         { return nil }
func (x *Exchange) StreamContentType() string       { return "application/json" }
func (x *Exchange) Determinism() (string, string)   { return "", "" }
func (x *Exchange) RecordSchema() string            { return ExchangeSchema }
func (x *Exchange) ErrorType(status int) string     { return x.errs.ErrorType(status) }
func (x *Exchange) MissError() (string, string)     { return x.errs.MissError() }
func (x *Exchange) ErrorBody(t, c, m string) []byte { return x.errs.ErrorBody(t, c, m) }

// SynthesizeStream is never asked: an exchange answer is replayed as
// recorded.
func (x *Exchange) SynthesizeStream(map[string]any, bool, io.Writer, func()) error {
	return errors.New("an exchange is replayed as recorded, never synthesized")
}

func (x *Exchange) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any {
	return nil
}

// ExchangeContentType is the Content-Type a stored exchange answer is
// replayed with: the recorded one, else JSON for a JSON body and
// application/octet-stream for bytes.
func ExchangeContentType(resp map[string]any) string {
	if ct, ok := resp["content_type"].(string); ok && ct != "" {
		if _, _, err := mime.ParseMediaType(ct); err == nil {
			return ct
		}
	}
	switch {
	case resp["body"] != nil:
		return "application/json"
	case resp["body_text"] != nil:
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}
