package record

import (
	"net/http"

	"github.com/traceforge/traceforge/internal/provider/registry"
)

// preparingTransport is the proxy's transport: a call of a provider whose
// descriptor has PrepareUpstream (Bedrock's SigV4 re-signing and region,
// Vertex AI's location) is handed to it as a copy of the outbound request
// with the exact body sent, right before it leaves; an error fails the call
// (ReverseProxy's error handler answers 502) with nothing sent. Every other
// call goes as it is.
type preparingTransport struct{ next http.RoundTripper }

func (t preparingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := callOf(req.Context())
	if c == nil {
		return t.next.RoundTrip(req)
	}
	d := registry.Provider(c.route)
	if d == nil || d.PrepareUpstream == nil {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	if err := d.PrepareUpstream(out, c.upstream); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(out)
}
