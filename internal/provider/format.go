package provider

import (
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Format is one provider wire format (one API endpoint family, e.g. OpenAI
// chat completions): everything traceforge knows about its requests,
// responses, streams and errors. Record, replay, verify, live, check and the
// Go transport reach a Format only through the registry
// (internal/provider/registry), never by naming a sub-package.
//
// A Format works on generic JSON (map[string]any with numbers as json.Number,
// see Decode), never on SDK types, so unknown provider fields survive. Every
// method is safe for concurrent use; a Format holds no state.
//
// Adding a wire format (docs/architecture.md, "Wire layer"): write a
// sub-package internal/provider/<provider>/<format> with a type implementing
// Format (and UsageInjector only when the proxy may add a usage option), its
// request schema fragment in internal/schema, fixtures and tests, then add it
// to the list in registry.Formats. Nothing else changes.
type Format interface {
	// Provider is the snapshot folder the format's records go to
	// ("openai", "anthropic", …). Several formats share a provider.
	Provider() Name
	// Endpoint is the format's key endpoint, the E of the request key
	// (DESIGN §4), e.g. "/v1/chat/completions". Formats whose key endpoint
	// depends on the path (Gemini: the model is in the path) return their
	// pattern here and the concrete endpoint from Route.
	Endpoint() Endpoint
	// Route reports whether the format owns an HTTP call, and its key
	// endpoint. path is the URL path without query; any prefix the
	// application's base URL adds is allowed. The method is part of the
	// route (GET /v1/responses/{id} is not the POST route).
	Route(method, path string) (Endpoint, bool)
	// OwnsRecord reports whether a stored format 1.0.0 request of the
	// format's provider belongs to this format. 1.0.0 records carry no
	// endpoint, so it was derived from the body (DESIGN §11 "Keys and
	// lookups": openai + "messages" → chat, openai + "prompt" →
	// completions); only the migration to 1.1.0 still asks (1.1.0 records
	// store their endpoint). Formats that did not exist in 1.0.0 return
	// false. Among the formats of one provider the registry asks in list
	// order and falls back to the provider's first format.
	OwnsRecord(request map[string]any) bool
	// Streams reports whether a call is answered as a stream. Format 1.0.0:
	// the body has "stream": true. (Gemini decides by path, Ollama streams
	// unless "stream": false, which is why both arguments are given.)
	Streams(path string, body map[string]any) bool

	// NormalizeStored applies the stored normalization (DESIGN §11, closed
	// list) in place: what is stored, keyed and sent by --live.
	NormalizeStored(request map[string]any)
	// KeyRequest returns the copy of a stored request the key is computed
	// over: the key-only normalization (DESIGN §11, closed list: stream
	// fields dropped, tool-call ids renumbered, …). It never modifies
	// request. kc may be nil; formats whose key depends on other snapshots
	// (Responses' previous_response_id) use it to resolve them.
	KeyRequest(request map[string]any, kc *KeyContext) map[string]any

	// LiveBody is the body `verify --live` posts to the key endpoint for a
	// stored request: the request without its transport-only members
	// (stream, stream_options; Gemini will also drop the "model" it took
	// from the path). It never modifies request.
	LiveBody(request map[string]any) map[string]any

	// Fields derives the record's normalized response fields from a final
	// body in the format's non-streamed shape (for a stream: the
	// Assembler's result). Errors wrap ErrMalformed or ErrNoUsage.
	Fields(body map[string]any) (snapshot.Fields, error)
	// NewAssembler returns a fresh assembler for one streamed answer.
	NewAssembler() Assembler
	// StreamContentType is the Content-Type of the format's streams
	// ("text/event-stream; charset=utf-8" for SSE; NDJSON formats differ).
	StreamContentType() string
	// SynthesizeStream writes a correct stream carrying body (replay of a
	// streamed request), one Write (and flush) per event, deterministic,
	// lazily and in time linear in body (WriteLazily: an error is found
	// before anything is written; DESIGN §12.10.1), carrying every member
	// of the stored answer (§12.10.2). includeUsage asks for the usage
	// chunk where the format has one.
	SynthesizeStream(body map[string]any, includeUsage bool, w io.Writer, flush func()) error
	// SynthesizeBody builds a non-streamed body from normalized fields for a
	// snapshot stored without one (migrated from format 0.9.0), with the
	// placeholders docs/format.md lists; nil when the format has no such
	// snapshots.
	SynthesizeBody(snapshotID string, created time.Time, requestModel string, f snapshot.Fields) map[string]any

	// ErrorBody is an error in the provider's shape (code is OpenAI's error
	// code; "" = null, ignored where the shape has none).
	ErrorBody(typ, code, message string) []byte
	// ErrorType is the provider's error type for an HTTP status traceforge
	// answers itself (bad JSON, too large, upstream unreachable, …).
	ErrorType(status int) string
	// MissError is the error type and code of a replay miss (404).
	MissError() (typ, code string)

	// Determinism names the request members the determinism policy
	// (DESIGN §7, §12.2) requires: the JSON pointer of the temperature
	// ("/temperature"; Gemini "/generationConfig/temperature") and of the
	// seed ("/seed"), "" where the API has none (Anthropic and Responses
	// have no seed; embeddings neither).
	Determinism() (temperature, seed string)

	// RecordSchema is the JSON pointer, inside the embedded
	// snapshot-file.schema.json, of the definition its stored records are
	// validated against (schema per endpoint, DESIGN §12.2): the record
	// fields with the format's endpoint, request and response shapes.
	RecordSchema() string
}

// UsageInjector is the optional capability of a format whose streams carry
// token usage only on request (OpenAI chat and completions:
// stream_options.include_usage). The recording proxy then asks for usage
// itself and strips it from what the application gets (DESIGN §11).
type UsageInjector interface {
	// IncludesUsage reports whether the application already asked for
	// usage in the stream.
	IncludesUsage(body map[string]any) bool
	// InjectUsage returns the raw body with the usage option set; false
	// when the body cannot be rewritten (the upstream then answers it as it
	// sees fit).
	InjectUsage(body []byte) ([]byte, bool)
	// NewUsageStripper wraps w so that the usage the proxy added is removed
	// from the stream the application reads.
	NewUsageStripper(w io.Writer, flush func()) io.WriteCloser
}

// KeyContext is what key computation may need beyond the request itself.
// The zero value (or nil) resolves nothing.
type KeyContext struct {
	// Parent maps a response id the provider minted (the Responses API's
	// previous_response_id) to the snapshot that recorded it and that
	// snapshot's lineage turn (1 when it has no lineage), so a chained
	// request is keyed by its parent snapshot (DESIGN §12.8, §12.9 item 5).
	// Record and replay resolve through the response ids they know; verify
	// resolves through the record's own lineage (RecordKeyContext). nil =
	// nothing is resolved.
	Parent func(responseID string) (snapshotID string, turn int, ok bool)
	// Normalize applies the project's declared key normalizers (DESIGN
	// §12.3) to the key request after the format's key-only rules; nil =
	// none. The registry applies it, never a format.
	Normalize KeyNormalizer
	// Defaults fills in the members an incoming request lacks (the
	// project's "defaults" rules, DESIGN §13.2) before it is keyed; nil =
	// none. Only parsing an incoming request applies it (registry.ParseWith:
	// record forwards and stores the result, replay keys it); a stored
	// request is keyed as it is.
	Defaults RequestDefaults
}

// RequestDefaults fills in the members a request lacks (internal/defaults).
// ApplyDefaults modifies request in place and returns the JSON pointers it
// set, in order (nil when none).
type RequestDefaults interface {
	ApplyDefaults(endpoint Endpoint, request map[string]any) []string
}

// WithDefaults returns kc with Defaults set to d (a copy; kc may be nil).
// With a nil d it returns kc as is.
func WithDefaults(kc *KeyContext, d RequestDefaults) *KeyContext {
	if d == nil {
		return kc
	}
	c := KeyContext{Defaults: d}
	if kc != nil {
		c = *kc
		c.Defaults = d
	}
	return &c
}

// KeyNormalizer rewrites the volatile values of a key request (the
// project's "normalize" rules, internal/normalize). NormalizeKey never
// modifies request; it returns the normalized copy and the names of the
// rules that changed it, in config order without repeats.
type KeyNormalizer interface {
	NormalizeKey(request map[string]any) (map[string]any, []string)
}

// WithNormalizer returns kc with Normalize set to n (a copy; kc may be
// nil). With a nil n it returns kc as is.
func WithNormalizer(kc *KeyContext, n KeyNormalizer) *KeyContext {
	if n == nil {
		return kc
	}
	c := KeyContext{Normalize: n}
	if kc != nil {
		c = *kc
		c.Normalize = n
	}
	return &c
}

// Resolve looks a response id up; ok is false when kc (or its Parent) is
// nil or the id is unknown.
func (kc *KeyContext) Resolve(responseID string) (snapshotID string, turn int, ok bool) {
	if kc == nil || kc.Parent == nil {
		return "", 0, false
	}
	return kc.Parent(responseID)
}

// RecordKeyContext is the KeyContext of a stored record (verify): every
// response id resolves to the record's own lineage parent, so the key is
// reproducible from the file alone (DESIGN §12.8 "More settled details").
// A record without lineage resolves nothing.
func RecordKeyContext(parentID string, turn int) *KeyContext {
	if parentID == "" {
		return nil
	}
	return &KeyContext{Parent: func(string) (string, int, bool) { return parentID, turn - 1, true }}
}

// Lineager is the optional capability of a format whose conversation lineage
// is not the chat rule over "messages" (DESIGN §11: the parent is the
// request cut before its last assistant message). Formats without it get
// that rule.
type Lineager interface {
	// Lineage returns a request's lineage: its parent snapshot and turn,
	// ok false when it has none. parentID computes the snapshot id of a
	// request of the same format (a cut copy of this one). It never
	// modifies request.
	Lineage(request map[string]any, kc *KeyContext, parentID func(cut map[string]any) (string, error)) (parent string, turn int, ok bool, err error)
}

// Renumberer renumbers ids in order of first appearance (DESIGN §4): the
// same id always gets the same number, prefix+"1", prefix+"2", …. Non-string
// values are kept. The zero value is not usable; use NewRenumberer.
type Renumberer struct {
	prefix string
	ids    map[string]string
}

// NewRenumberer returns a Renumberer writing prefix+N.
func NewRenumberer(prefix string) *Renumberer {
	return &Renumberer{prefix: prefix, ids: map[string]string{}}
}

// ID returns the number of id.
func (r *Renumberer) ID(id any) any {
	s, ok := id.(string)
	if !ok {
		return id
	}
	if n, ok := r.ids[s]; ok {
		return n
	}
	n := r.prefix + strconv.Itoa(len(r.ids)+1)
	r.ids[s] = n
	return n
}

// RewriteMessages replaces request["messages"], when it is an array, by
// RewriteEach of it: the key-only rules of chat-like formats rewrite each
// message of a copy.
func RewriteMessages(request map[string]any, fn func(msg map[string]any)) {
	if msgs, ok := request["messages"].([]any); ok {
		request["messages"] = RewriteEach(msgs, fn)
	}
}

// RenumberToolCallIDs is the tool-call key rule of chat-like formats
// (OpenAI chat, Ollama chat; DESIGN §4): in request["messages"] (a copy
// when any id is there to renumber, else left as it is; the caller's
// messages are never modified), every assistant
// tool_calls[].id and every tool message's tool_call_id becomes call_1,
// call_2, … in order of first appearance.
func RenumberToolCallIDs(request map[string]any) {
	if !hasToolCallIDs(request) {
		return // nothing to renumber: no copy of every message
	}
	ids := NewRenumberer("call_")
	RewriteMessages(request, func(msg map[string]any) {
		if calls, ok := msg["tool_calls"].([]any); ok {
			msg["tool_calls"] = RewriteEach(calls, func(call map[string]any) {
				if id, ok := call["id"]; ok {
					call["id"] = ids.ID(id)
				}
			})
		}
		if id, ok := msg["tool_call_id"]; ok {
			msg["tool_call_id"] = ids.ID(id)
		}
	})
}

// hasToolCallIDs reports whether a message of request["messages"] has
// tool_calls or tool_call_id, the members RenumberToolCallIDs rewrites.
func hasToolCallIDs(request map[string]any) bool {
	msgs, _ := request["messages"].([]any)
	for _, m := range msgs {
		msg, ok := m.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := msg["tool_calls"]; ok {
			return true
		}
		if _, ok := msg["tool_call_id"]; ok {
			return true
		}
	}
	return false
}

// RewriteEach returns a copy of list in which every object element is a
// shallow copy handed to fn to rewrite; other elements are kept as they are.
// list and its elements are never modified.
func RewriteEach(list []any, fn func(obj map[string]any)) []any {
	out := make([]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			out[i] = e
			continue
		}
		c := maps.Clone(m)
		fn(c)
		out[i] = c
	}
	return out
}

// WithoutStream is a shallow copy of request without "stream" and
// "stream_options", the first key-only rule of every SSE format.
func WithoutStream(request map[string]any) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		if k == "stream" || k == "stream_options" {
			continue
		}
		r[k] = v
	}
	return r
}

// optionalRequestFields are the optional fields of DESIGN §3 whose explicit
// null is stored as absent.
var optionalRequestFields = []string{
	"top_p", "frequency_penalty", "presence_penalty", "seed", "stop", "tools",
	"stop_sequences", "top_k", "system", "tool_choice", "metadata",
	"max_completion_tokens", "n", "best_of", "user", "response_format",
	"logit_bias", "logprobs", "top_logprobs", "parallel_tool_calls", "stream_options",
}

// DropNullOptionals is the stored normalization shared by every format of
// format 1.0.0: an explicit null on an optional field of DESIGN §3 is
// stored as absent.
func DropNullOptionals(request map[string]any) {
	for _, f := range optionalRequestFields {
		if v, ok := request[f]; ok && v == nil {
			delete(request, f)
		}
	}
}

// StreamFlag reports whether body has "stream": true (DESIGN §11: a request
// of format 1.0.0 streams iff it does).
func StreamFlag(body map[string]any) bool {
	s, _ := body["stream"].(bool)
	return s
}

// SSEContentType is the Content-Type of server-sent-event streams.
const SSEContentType = "text/event-stream; charset=utf-8"

// IsStream reports whether an upstream answer with Content-Type contentType
// is a stream in f's framing: its media type (before any parameter, case
// ignored) starts like f's StreamContentType.
func IsStream(f Format, contentType string) bool {
	want, _, _ := strings.Cut(f.StreamContentType(), ";")
	return strings.HasPrefix(strings.ToLower(contentType), strings.ToLower(strings.TrimSpace(want)))
}

// PathBinder is the optional capability of a format whose URL path carries
// part of the request (Gemini: the model, DESIGN §12.9 item 4). registry.Parse
// calls BindPath with the routed path (no query) on the decoded body before
// NormalizeStored; an error refuses the call (it wraps ErrBadRequest there,
// and ErrContradictsPath when BindPath's error does).
type PathBinder interface {
	BindPath(path string, request map[string]any) error
}

// DropTopLevelNulls is the stored normalization of the formats of format
// 1.1.0 (DESIGN §12.9 item 2): every explicit top-level null is stored as
// absent.
func DropTopLevelNulls(request map[string]any) {
	for k, v := range request {
		if v == nil {
			delete(request, k)
		}
	}
}

// UpstreamPath is the optional capability of a format that accepts a path
// its upstream does not serve as such (Anthropic's /messages, posted by
// clients whose base URL ends in /v1): the recording proxy forwards the
// path UpstreamPath returns, relative to the provider's upstream base URL.
type UpstreamPath interface {
	UpstreamPath(path string) string
}

// NoStream is the assembler of a format that never streams (embeddings):
// every Write and Done fail with err, which should wrap ErrMalformed.
func NoStream(err error) Assembler { return noStream{err} }

type noStream struct{ err error }

func (n noStream) Write(p []byte) (int, error)   { return len(p), n.err }
func (n noStream) Done() (map[string]any, error) { return nil, n.err }

// StreamFramingHinter is implemented by formats whose streams need
// something from the request to arrive in the format's framing (Gemini's
// ?alt=sse): the hint record gives when a stream came back framed
// otherwise.
type StreamFramingHinter interface {
	StreamFramingHint() string
}

// QueryKeyed is the optional capability of a format whose key endpoint
// carries query parameters of the call (Azure OpenAI's api-version: a call
// under another API version is another call). registry.RouteURL hands its
// Route the path followed by those parameters, in KeyQuery's order and
// encoded ("…/chat/completions?api-version=2024-10-21"); its Route must
// accept that form, which is also how the key endpoint is stored.
type QueryKeyed interface {
	KeyQuery() []string
}
