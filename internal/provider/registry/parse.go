package registry

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Parse turns a request's method, path, headers and body into a Request:
// the route's format, the body decoded strictly (snapshot.Decode) with the
// stored normalization applied, the stored headers, and the key. Errors wrap
// provider.ErrNotLLMCall or provider.ErrBadRequest.
//
// The key is the stored request's (RequestKey) with the route's endpoint,
// which format 1.1.0 stores in the record (DESIGN §12.2): no endpoint is
// guessed from the body.
func Parse(method, path string, header http.Header, body []byte) (*provider.Request, error) {
	return ParseWith(method, path, header, body, nil)
}

// ParseWith is Parse with a KeyContext for the key (record and replay
// resolve Responses chains through it, and the project's declared key
// normalizers travel in kc.Normalize: Request.KeyNormalizers names those
// that changed the key); kc may be nil.
func ParseWith(method, path string, header http.Header, body []byte, kc *provider.KeyContext) (*provider.Request, error) {
	return parse(method, path, header, body, kc, snapshot.Decode)
}

// ParseAliasingWith is ParseWith with the body decoded by
// snapshot.DecodeAliasing: the strings of Request.Body share body's memory
// (one copy fewer per string). The caller must not modify or reuse body
// while the Request's Body, or anything taken from it, is in use; the key,
// stored headers and key normalizer names never share it. For replay,
// which keys a request, answers and lets it go.
func ParseAliasingWith(method, path string, header http.Header, body []byte, kc *provider.KeyContext) (*provider.Request, error) {
	return parse(method, path, header, body, kc, snapshot.DecodeAliasing)
}

func parse(method, path string, header http.Header, body []byte, kc *provider.KeyContext, decode func([]byte) (any, error)) (*provider.Request, error) {
	f, e, ok := Route(method, path)
	if !ok {
		return nil, fmt.Errorf("%w: %s %s", provider.ErrNotLLMCall, method, path)
	}
	return parseRouted(f, e, path, header, body, kc, decode)
}

// ParseRouted is ParseWith for a call Route has already routed to format f
// and key endpoint e (record routes each call once: DESIGN §13.1).
func ParseRouted(f provider.Format, e provider.Endpoint, path string, header http.Header, body []byte, kc *provider.KeyContext) (*provider.Request, error) {
	return parseRouted(f, e, path, header, body, kc, snapshot.Decode)
}

// ParseRoutedAliasing is ParseRouted decoding as ParseAliasingWith does.
func ParseRoutedAliasing(f provider.Format, e provider.Endpoint, path string, header http.Header, body []byte, kc *provider.KeyContext) (*provider.Request, error) {
	return parseRouted(f, e, path, header, body, kc, snapshot.DecodeAliasing)
}

func parseRouted(f provider.Format, e provider.Endpoint, path string, header http.Header, body []byte, kc *provider.KeyContext, decode func([]byte) (any, error)) (*provider.Request, error) {
	v, err := decode(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", provider.ErrBadRequest, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the body is not a JSON object", provider.ErrBadRequest)
	}
	req := &provider.Request{Format: f, Provider: f.Provider(), Endpoint: e, Body: m, Raw: body, Headers: provider.StoredHeaders(header)}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	req.Stream = f.Streams(path, m)
	if pb, ok := f.(provider.PathBinder); ok {
		if err := pb.BindPath(path, m); err != nil {
			return nil, fmt.Errorf("%w: %w", provider.ErrBadRequest, err)
		}
	}
	if inj, ok := f.(provider.UsageInjector); ok {
		req.IncludeUsage = inj.IncludesUsage(m)
	}
	f.NormalizeStored(m)
	if kc != nil && kc.Defaults != nil {
		req.DefaultsApplied = kc.Defaults.ApplyDefaults(BaseEndpoint(e), m) // a named upstream's rules are OpenAI's
	}
	req.Key, req.KeyNormalizers, err = keyOf(f, string(req.Provider), e, m, req.Headers, kc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", provider.ErrBadRequest, err)
	}
	return req, nil
}

// ParseHTTP reads r's body (the caller caps its size, e.g. with serve.Guard)
// and parses it. The body is consumed. A body over the cap wraps
// provider.ErrTooLarge.
func ParseHTTP(r *http.Request) (*provider.Request, error) { return ParseHTTPWith(r, nil) }

// ParseHTTPWith is ParseHTTP with a KeyContext (see ParseWith).
func ParseHTTPWith(r *http.Request, kc *provider.KeyContext) (*provider.Request, error) {
	if _, _, ok := Route(r.Method, r.URL.Path); !ok {
		return nil, fmt.Errorf("%w: %s %s", provider.ErrNotLLMCall, r.Method, r.URL.Path)
	}
	body, err := ReadHTTPBody(r)
	if err != nil {
		return nil, err
	}
	return ParseWith(r.Method, r.URL.Path, r.Header, body, kc)
}

// ReadHTTPBody reads r's body the way ParseHTTP does (the caller caps its
// size); a body over the cap wraps provider.ErrTooLarge. nil body: nil.
func ReadHTTPBody(r *http.Request) ([]byte, error) { return ReadHTTPBodyInto(r, nil) }

// ReadHTTPBodyInto is ReadHTTPBody reading into buf's spare capacity (from
// buf[:0]) when the body fits, so that a server can reuse buffers. The
// result may share buf's memory.
func ReadHTTPBodyInto(r *http.Request, buf []byte) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := readBody(buf[:0], r.Body, r.ContentLength)
	if err != nil {
		if serve.IsMaxBytes(err) {
			return nil, fmt.Errorf("%w: %w", provider.ErrTooLarge, err)
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return body, nil
}

// readBody reads body to its end like io.ReadAll, appending to b (empty):
// into its capacity, else into one buffer sized from the declared
// Content-Length (size; -1 = unknown) when that is within maxPresized, so
// that a request body is read without regrowing; a claimed size is never
// trusted beyond that.
func readBody(b []byte, body io.Reader, size int64) ([]byte, error) {
	switch {
	case size > maxPresized:
		return io.ReadAll(body)
	case size >= 0 && int64(cap(b)) <= size:
		b = make([]byte, 0, size+1) // +1: the read that sees EOF needs room
	case cap(b) == 0:
		b = make([]byte, 0, 512) // unknown size: start as io.ReadAll does
	}
	for {
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than declared: grow as io.ReadAll does
		}
	}
}

// maxPresized is the largest declared request size readBody allocates
// up front.
const maxPresized = 1 << 20
