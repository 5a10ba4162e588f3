package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// HeaderSnapshotID names the snapshot that answered a call, on record and
// replay responses alike (DESIGN §6).
const HeaderSnapshotID = "X-Traceforge-Snapshot-Id"

// HeaderSynthesized is "true" on replies synthesized for a snapshot without
// a stored body.
const HeaderSynthesized = "X-Traceforge-Synthesized"

// Sentinel errors of request parsing (registry.Parse).
var (
	// ErrNotLLMCall: the method and path are not a call any registered
	// format owns.
	ErrNotLLMCall = errors.New("not an LLM call traceforge covers")
	// ErrBadRequest: the body is not a JSON object traceforge can key
	// (invalid JSON, duplicate keys, integers beyond 2^53, …).
	ErrBadRequest = errors.New("request body cannot be keyed")
	// ErrContradictsPath: the body contradicts what the path says (a
	// Gemini body naming another model than its path). The provider would
	// answer a request traceforge cannot key faithfully: record answers 400
	// and forwards nothing (DESIGN §12.2).
	ErrContradictsPath = errors.New("the body contradicts the path")
	// ErrTooLarge: the request body exceeds serve.MaxRequestBody (answer 413).
	ErrTooLarge = errors.New("request body too large")
)

// Request is an incoming LLM call, parsed the way record, replay and live
// all see it (registry.Parse).
type Request struct {
	// Format is the wire format that owns the route the application called.
	Format Format
	// Provider is Format's provider.
	Provider Name
	// Endpoint is the key endpoint of the path the application called.
	Endpoint Endpoint
	// Body is the decoded request with the stored normalization applied:
	// exactly what a snapshot's "request" holds.
	Body map[string]any
	// Headers holds the stored request headers (anthropic-version,
	// anthropic-beta) when sent; nil when none. They join the key.
	Headers map[string]any
	// Key is the full 64-hex request key.
	Key string
	// KeyNormalizers names the declared key normalizers that changed the
	// key (DESIGN §12.3); nil when none did.
	KeyNormalizers []string
	// DefaultsApplied lists the JSON pointers the project's request
	// defaults set in Body (KeyContext.Defaults, DESIGN §13.2), in order;
	// nil when none. Body then differs from Raw by exactly those members.
	DefaultsApplied []string
	// Stream is true iff the call is answered as a stream (Format.Streams).
	Stream bool
	// IncludeUsage is true iff the application asked for usage in the
	// stream itself (UsageInjector.IncludesUsage; false for formats
	// without that capability).
	IncludeUsage bool
	// Raw is the body as received.
	Raw []byte
}

// ID is the 12-character snapshot id of the request.
func (r *Request) ID() string { return snapshot.IDOf(r.Key) }

// StoredHeaderNames are the only request headers a record may store; they
// join the key (DESIGN §11 "Keys and lookups").
var StoredHeaderNames = []string{"anthropic-beta", "anthropic-version"}

// StoredHeaders returns the request headers a snapshot stores (DESIGN §11
// "Keys and lookups"): anthropic-version and anthropic-beta, when sent, with
// repeated values joined by ",". nil when none was sent.
func StoredHeaders(h http.Header) map[string]any {
	var out map[string]any
	for i, name := range StoredHeaderNames {
		vs := h[storedHeaderKeys[i]]
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

// storedHeaderKeys are StoredHeaderNames in their canonical MIME
// form, the keys of an http.Header (h.Values(name) made that form, and
// allocated it, on every call).
var storedHeaderKeys = func() []string {
	keys := make([]string, len(StoredHeaderNames))
	for i, name := range StoredHeaderNames {
		keys[i] = http.CanonicalHeaderKey(name)
	}
	return keys
}()

// WriteError writes an error in f's shape (Format.ErrorBody) with status
// and x-should-retry: false, so the official SDKs do not retry it. code is
// OpenAI's error code ("" = null).
func WriteError(w http.ResponseWriter, f Format, status int, typ, code, message string) {
	body := f.ErrorBody(typ, code, message)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("x-should-retry", "false")
	h.Set("Content-Length", fmt.Sprint(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// WriteStatusError is WriteError with the format's error type for status
// (Format.ErrorType) and no code.
func WriteStatusError(w http.ResponseWriter, f Format, status int, message string) {
	WriteError(w, f, status, f.ErrorType(status), "", message)
}

// MissStatus is the status of a replay miss: 404, which the official SDKs
// never retry.
const MissStatus = http.StatusNotFound

// WriteMiss answers a request that matches no snapshot: 404 in the
// provider's error shape (Format.MissError) with x-should-retry: false,
// naming the request key and how to record it.
func WriteMiss(w http.ResponseWriter, req *Request) {
	msg := fmt.Sprintf("traceforge replay: no snapshot matches this %s %s request (key %s, id %s). "+
		"The request differs from every recorded one (drift); the verify report shows the diff against the closest snapshot. "+
		"If the change is intended, record it: traceforge record --only-missing -- <your command>, then commit the snapshot folder.",
		req.Provider, req.Endpoint, req.Key, req.ID())
	typ, code := req.Format.MissError()
	WriteError(w, req.Format, MissStatus, typ, code, msg)
}
