package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"

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
	e, ok := x.Route(r.Method, r.URL.Path)
	if !ok {
		return nil, "", false
	}
	return x, e, true
}

// exchangeFor is the exchange format of provider p that owns the stored
// endpoint e; nil when none does.
func exchangeFor(p provider.Name, e provider.Endpoint) provider.Format {
	if x := exchanges[p]; x != nil && x.Owns(e) {
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
	e, ok := x.RouteBody(method, path, body)
	if !ok {
		return nil, "", false
	}
	return x, e, true
}

// ExchangePattern is the route pattern of an exchange endpoint of provider
// p, "GET /v1/responses/{id}" for "GET /v1/responses/resp_1" (stats group
// exchanges by it); ok is false for an endpoint that is no exchange of p.
func ExchangePattern(p provider.Name, e provider.Endpoint) (string, bool) {
	x := exchanges[p]
	if x == nil {
		return "", false
	}
	return x.Pattern(e)
}
