// Package sdkmw attributes calls from inside an SDK's middleware, for SDKs
// that send some requests on a connection of their own, past the HTTP
// client's RoundTripper (openai-go's azure package on loopback HTTP): the
// middleware runs in the caller's goroutine, so traceforge.SourceTransport
// still finds the calling line — this package's frames are skipped.
package sdkmw

import (
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/traceforge/traceforge"
)

// roundTripper turns the SDK's next middleware into an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Attribute is an openai-go middleware (option.WithMiddleware) that sets
// X-Traceforge-Source on req with traceforge.SourceTransport and passes it
// to next.
func Attribute(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	st := &traceforge.SourceTransport{Base: roundTripper(next), SkipPackages: []string{"github.com/traceforge/traceforge/e2e/internal/sdkmw"}}
	return st.RoundTrip(req)
}
