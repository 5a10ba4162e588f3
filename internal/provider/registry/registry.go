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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/traceforge/traceforge/internal/secret"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/anthropic"
	"github.com/traceforge/traceforge/internal/provider/gemini"
	"github.com/traceforge/traceforge/internal/provider/ollama"
	"github.com/traceforge/traceforge/internal/provider/openai"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// providers is the explicit list of providers (DESIGN §13.1): adding a
// provider is one line here and a descriptor in its own package.
var providers = []*provider.Descriptor{
	openai.Descriptor,
	anthropic.Descriptor,
	gemini.Descriptor,
	ollama.Descriptor,
}

// formats is every provider's formats, in lookup order: Route asks each in
// turn, and among the formats of one provider the first is the provider's
// default (ForRecord, ForProvider).
var formats = func() []provider.Format {
	var out []provider.Format
	for _, d := range providers {
		out = append(out, d.Formats...)
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
// fragment is ignored. Unowned calls (moderations, images, GET
// routes, …) are ok=false.
func Route(method, path string) (provider.Format, provider.Endpoint, bool) {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	for _, f := range formats {
		if e, ok := f.Route(method, path); ok {
			return f, e, true
		}
	}
	return nil, "", false
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
// item 8): the routed format's; else /api/… goes to Ollama; a request with
// an x-goog-api-key header, a key= query parameter, a /v1beta/ or
// /v1alpha/ segment, or a …/v1/models/X:method path goes to Gemini; else
// Anthropic when it carries anthropic-version, else OpenAI (DESIGN §11).
func UpstreamOf(r *http.Request) provider.Name {
	path := r.URL.Path
	if f, _, ok := Route(r.Method, path); ok {
		return f.Provider()
	}
	if strings.HasPrefix(path, "/api/") {
		return provider.Ollama
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
	return "POST " + strings.Join(out, ", ") + " (Gemini also :streamGenerateContent and :batchEmbedContents, under v1, v1beta or v1alpha)"
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
const baseURLs = "OPENAI_BASE_URL ends in /v1; ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL and OLLAMA_HOST do not"

func routes(method, path string) bool {
	_, _, ok := Route(method, path)
	return ok
}

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
			return nil, fmt.Errorf("%w: %v", provider.ErrBadRequest, err)
		}
	}
	if inj, ok := f.(provider.UsageInjector); ok {
		req.IncludeUsage = inj.IncludesUsage(m)
	}
	f.NormalizeStored(m)
	if kc != nil && kc.Defaults != nil {
		req.DefaultsApplied = kc.Defaults.ApplyDefaults(e, m)
	}
	req.Key, req.KeyNormalizers, err = Key(string(req.Provider), e, m, req.Headers, kc)
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

// NormalizeStored applies the stored normalization of the format of a
// stored request (provider p, key endpoint e) in place (DESIGN §11); when no
// format owns the endpoint only explicit nulls on optional fields are
// dropped.
func NormalizeStored(p string, e provider.Endpoint, request map[string]any) {
	if f := Lookup(provider.Name(p), e); f != nil {
		f.NormalizeStored(request)
		return
	}
	provider.DropNullOptionals(request)
}

// KeyObject builds the key object {"provider", "endpoint", "request"[,
// "headers"]} of a stored request (DESIGN §4): the stored key endpoint and
// the key-only normalization of its format applied to a copy of the
// request, then the declared key normalizers of kc.Normalize (DESIGN
// §12.3, §12.9 item 3: after the built-in rules, never on headers). kc may
// be nil. A provider or endpoint no format owns is an error.
func KeyObject(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (map[string]any, error) {
	obj, _, err := keyObject(p, e, request, headers, kc)
	return obj, err
}

func keyObject(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (map[string]any, []string, error) {
	kr, applied, err := keyRequest(p, e, request, kc)
	if err != nil {
		return nil, nil, err
	}
	obj := map[string]any{
		"provider": p,
		"endpoint": string(e),
		"request":  kr,
	}
	if len(headers) > 0 {
		obj["headers"] = headers
	}
	return obj, applied, nil
}

// keyRequest is the "request" member of the key object (KeyObject) and
// the names of the declared key normalizers that changed it.
func keyRequest(p string, e provider.Endpoint, request map[string]any, kc *provider.KeyContext) (map[string]any, []string, error) {
	f, err := ForStored(p, e)
	if err != nil {
		return nil, nil, err
	}
	kr := f.KeyRequest(request, kc)
	var applied []string
	if kc != nil && kc.Normalize != nil {
		kr, applied = kc.Normalize.NormalizeKey(kr)
	}
	return kr, applied, nil
}

// appendKeyObject appends the canonical (RFC 8785) bytes of the key
// object KeyObject builds, without building it: its members in their
// canonical order ("endpoint" < "headers" < "provider" < "request"), each
// value canonicalized as AppendCanonical does in the object.
func appendKeyObject(b []byte, p string, e provider.Endpoint, kr, headers map[string]any) ([]byte, error) {
	var err error
	b = append(b, `{"endpoint":`...)
	if b, err = snapshot.AppendCanonicalString(b, string(e)); err != nil {
		return nil, err
	}
	if len(headers) > 0 {
		b = append(b, `,"headers":`...)
		if b, err = snapshot.AppendCanonical(b, headers); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"provider":`...)
	if b, err = snapshot.AppendCanonicalString(b, p); err != nil {
		return nil, err
	}
	b = append(b, `,"request":`...)
	if b, err = snapshot.AppendCanonical(b, kr); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// RequestKey is the full 64-hex request key: SHA-256 of the JCS of the key
// object. kc may be nil.
func RequestKey(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (string, error) {
	key, _, err := Key(p, e, request, headers, kc)
	return key, err
}

// Key is RequestKey plus the names of the declared key normalizers
// (kc.Normalize) that changed the key: a record's key_normalizers, nil when
// none did.
func Key(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (string, []string, error) {
	kr, applied, err := keyRequest(p, e, request, kc)
	if err != nil {
		return "", nil, err
	}
	bp := canonicalBufs.Get().(*[]byte)
	defer canonicalBufs.Put(bp)
	b, err := appendKeyObject((*bp)[:0], p, e, kr, headers)
	if err != nil {
		return "", nil, err
	}
	if cap(b) <= maxPooledCanonical {
		*bp = b
	}
	sum := sha256.Sum256(b)
	var key [2 * sha256.Size]byte // hex.EncodeToString would allocate twice
	hex.Encode(key[:], sum[:])
	return string(key[:]), applied, nil
}

// canonicalBufs holds the buffers key objects are canonicalized into: the
// bytes are only hashed, so every call (one per request served or recorded)
// reuses one instead of growing a new one from nothing.
var canonicalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxPooledCanonical is the largest buffer kept in canonicalBufs: a rare
// huge request does not pin its buffer.
const maxPooledCanonical = 256 << 10

// Lineage computes a record's lineage from its request (DESIGN §11): the
// format's own rule when it has one (provider.Lineager: Responses chains and
// input items), else the chat rule — when messages hold an assistant
// message, the parent is this request with messages cut just before the
// last assistant message, and turn is the number of assistant messages + 1.
// ok is false when there is no lineage. kc may be nil.
func Lineage(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (parentID string, turn int, ok bool, err error) {
	parentOf := func(cut map[string]any) (string, error) {
		key, err := RequestKey(p, e, cut, headers, kc)
		if err != nil {
			return "", fmt.Errorf("lineage: %w", err)
		}
		return snapshot.IDOf(key), nil
	}
	if f, ferr := ForStored(p, e); ferr == nil {
		if l, ok := f.(provider.Lineager); ok {
			return l.Lineage(request, kc, parentOf)
		}
	}
	msgs, _ := request["messages"].([]any)
	last, count := -1, 0
	for i, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "assistant" {
			last = i
			count++
		}
	}
	if last < 0 {
		return "", 0, false, nil
	}
	parent := maps.Clone(request)
	parent["messages"] = append([]any(nil), msgs[:last]...)
	id, err := parentOf(parent)
	if err != nil {
		return "", 0, false, err
	}
	return id, count + 1, true, nil
}

// NewRecord assembles a complete record value (snapshot.NewRecord) with the
// id and lineage computed from the request. The request must already carry
// the stored normalization. kc may be nil; the names of the declared key
// normalizers that changed the key are stored as key_normalizers (omitted
// when none did). It returns the record and its full key.
func NewRecord(p string, e provider.Endpoint, at time.Time, src source.Source, request, headers map[string]any, resp snapshot.Response, kc *provider.KeyContext) (map[string]any, string, error) {
	key, applied, err := Key(p, e, request, headers, kc)
	if err != nil {
		return nil, "", err
	}
	var lin *snapshot.Lineage
	if parent, turn, ok, err := Lineage(p, e, request, headers, kc); err != nil {
		return nil, "", err
	} else if ok {
		lin = &snapshot.Lineage{ParentID: parent, Turn: turn}
	}
	rec, err := NewRecordKeyed(key, applied, lin, e, at, src, request, headers, resp)
	return rec, key, err
}

// NewRecordKeyed is NewRecord for a caller that already has the request's
// key and applied key normalizers (Key, or ParseWith's Request.Key and
// KeyNormalizers) and its lineage (Lineage; nil = none), computed with the
// same arguments: record computes each once per call.
func NewRecordKeyed(key string, applied []string, lin *snapshot.Lineage, e provider.Endpoint, at time.Time, src source.Source, request, headers map[string]any, resp snapshot.Response) (map[string]any, error) {
	rec, err := snapshot.NewRecord(key, string(e), lin, at, src, request, headers, resp)
	if err != nil {
		return nil, err
	}
	if len(applied) > 0 {
		names := make([]any, len(applied))
		for i, n := range applied {
			names[i] = n
		}
		rec["key_normalizers"] = names
		if err := snapshot.Rehash(rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}
