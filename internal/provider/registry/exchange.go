package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// exchanges are the exchange formats of the providers that have exchange
// routes (DESIGN §13.4), by provider.
var exchanges = func() map[provider.Name]*provider.Exchange {
	out := map[provider.Name]*provider.Exchange{}
	for _, d := range providers {
		if len(d.ExchangeRoutes) > 0 && len(d.Formats) > 0 {
			out[d.Name] = provider.NewExchange(d.Name, d.ExchangeRoutes, d.Formats[0])
		}
	}
	return out
}()

// RouteExchange returns the exchange format and endpoint ("METHOD
// /route") of a call that no format routes: the provider UpstreamOf names,
// when one of its ExchangeRoutes matches the call. ok is false otherwise
// (an unknown path).
func RouteExchange(r *http.Request) (provider.Format, provider.Endpoint, bool) {
	x := exchanges[UpstreamOf(r)]
	if x == nil {
		return nil, "", false
	}
	name, path := splitNamedPath(r.URL.Path)
	e, ok := x.Route(r.Method, path)
	if !ok {
		return nil, "", false
	}
	return x, withName(name, e), true
}

// splitNamedPath is the named upstream of a path under /u/NAME/ and the
// rest of the path; "" and path itself for any other path.
func splitNamedPath(path string) (name, rest string) {
	if n, r, ok := SplitNamed(path); ok {
		return n, r
	}
	return "", path
}

// withName is the exchange endpoint e of a call to the upstream named name
// ("GET /u/groq/v1/models"): the same request to two hosts is two
// snapshots, as for LLM calls (named.go). e itself when name is "".
func withName(name string, e provider.Endpoint) provider.Endpoint {
	if name == "" {
		return e
	}
	m, route, _ := provider.SplitExchangeEndpoint(e)
	return provider.ExchangeEndpoint(m, NamedPrefix+name+route)
}

// withoutName is a stored exchange endpoint without its named upstream.
func withoutName(e provider.Endpoint) provider.Endpoint {
	m, route, ok := provider.SplitExchangeEndpoint(e)
	if !ok {
		return e
	}
	if _, rest, named := SplitNamed(route); named {
		return provider.ExchangeEndpoint(m, rest)
	}
	return e
}

// exchangeFor is the exchange format of provider p that owns the stored
// endpoint e; nil when none does.
func exchangeFor(p provider.Name, e provider.Endpoint) provider.Format {
	if x := exchanges[p]; x != nil && x.Owns(withoutName(e)) {
		return x
	}
	return nil
}

// ParseExchange turns a call RouteExchange routed to format f and endpoint
// e into its request: the stored request {method, path, query, body…}
// (provider.ExchangeRequest) and its key. It never fails on a body: any
// bytes are kept.
func ParseExchange(f provider.Format, e provider.Endpoint, u *url.URL, body []byte) (*provider.Request, error) {
	method, route, _ := provider.SplitExchangeEndpoint(e)
	m := provider.ExchangeRequest(method, route, u.Query(), body)
	req := &provider.Request{Format: f, Provider: f.Provider(), Endpoint: e, Body: m, Raw: body}
	var err error
	if req.Key, _, err = keyOf(f, string(req.Provider), e, m, nil, nil); err != nil {
		return nil, err
	}
	return req, nil
}

// OccurrenceKey is the key of the n-th occurrence (0-based) of a request
// whose key is key (DESIGN §13.4): identical requests of one run answered
// in turn (polling; an LLM call answered differently) are kept in order.
// The first keeps the request's own key (and id); a later one's key is
// SHA-256 of the JCS of {"key": key, "occurrence": n}.
func OccurrenceKey(key string, n int) string {
	if n <= 0 {
		return key
	}
	sum := sha256.Sum256([]byte(`{"key":"` + key + `","occurrence":` + strconv.Itoa(n) + `}`))
	return hex.EncodeToString(sum[:])
}

// ExchangeByBody returns the exchange format and endpoint of a call that
// the LLM format f routes but whose body makes it an exchange (a route
// with provider.ExchangeRoute.Body: OpenAI's background responses); ok is
// false for every other call.
func ExchangeByBody(f provider.Format, method, path string, body []byte) (provider.Format, provider.Endpoint, bool) {
	x := exchanges[f.Provider()]
	if x == nil {
		return nil, "", false
	}
	name, rest := splitNamedPath(path)
	e, ok := x.RouteBody(method, rest, body)
	if !ok {
		return nil, "", false
	}
	return x, withName(name, e), true
}

// ExchangePattern is the route pattern of an exchange endpoint of provider
// p, "GET /v1/responses/{id}" for "GET /v1/responses/resp_1" (stats group
// exchanges by it); ok is false for an endpoint that is no exchange of p.
func ExchangePattern(p provider.Name, e provider.Endpoint) (string, bool) {
	x := exchanges[p]
	if x == nil {
		return "", false
	}
	pattern, ok := x.Pattern(withoutName(e))
	if m, route, _ := provider.SplitExchangeEndpoint(e); ok {
		if name, _, named := SplitNamed(route); named {
			_, base, _ := strings.Cut(pattern, " ")
			pattern = m + " " + NamedPrefix + name + base
		}
	}
	return pattern, ok
}
