// Package fakeupstream is a deterministic fake LLM upstream speaking the
// OpenAI (chat completions, completions, Responses, embeddings), Anthropic
// (messages), Gemini and Ollama native wire formats closely enough for the
// official SDKs to work against it, streamed and not.
//
// It serves, on any path prefix (matched on the path suffix):
//
//	POST …/chat/completions   OpenAI chat completions
//	POST …/completions        OpenAI legacy completions
//	POST …/messages           Anthropic messages
//	POST …/responses          OpenAI Responses (typed SSE when "stream": true)
//	GET, DELETE …/responses/{id}, POST …/responses/{id}/cancel   a stored Responses answer
//	POST …/embeddings         OpenAI embeddings (float or base64)
//	POST …/{v1,v1beta,v1alpha}/models/{model}:generateContent,
//	     :streamGenerateContent, :embedContent, :batchEmbedContents   Gemini
//	POST …/api/chat, …/api/generate, …/api/embed   Ollama native (NDJSON)
//
// Anything else (other paths, other methods) is a 404 in the OpenAI error
// shape. responses.go, embeddings.go, gemini.go and ollama.go say how each
// newer format answers; ids there are derived from the request (see
// Options.MintIDs) rather than from the call counter.
//
// Answers are derived only from the request body: the text is
// "Echo: " + the last user message's text (prefixed by Options.ContentPrefix),
// truncated to max_tokens words (max_completion_tokens wins on chat; finish
// "length" / stop_reason "max_tokens" when cut). Only the per-call identifiers
// differ between two identical requests: the response id (chatcmpl-fake…,
// cmpl-fake…, msg_fake…), tool-call ids (call_fake…, toolu_fake…), created
// (a fixed base + the call counter) and the x-request-id / request-id header.
//
// Tool calls: when the request has tools, tool_choice is not "none", and the
// last message is a plain user message, the answer is a call to the first tool
// (or the one forced by tool_choice) with arguments built from its JSON schema
// and the prompt: string properties get the first capitalised word of the
// prompt after its first word ("…weather in Paris?" → {"city":"Paris"}),
// enums their first value, integers/numbers 1, booleans true. If the prompt
// contains the word "both", two parallel calls to that tool are made (with the
// first and second capitalised words). When the last message is a tool result
// (OpenAI role "tool", Anthropic user message with tool_result blocks) the
// answer is text "The tool returned: <results>".
//
// Usage: prompt/input tokens = number of whitespace-separated words of all
// message (and system) text; completion/output tokens = words of the answer
// (for a tool call: 1 + words of its arguments string).
//
// The request field n (and best_of) is ignored: there is always exactly one
// choice. Anthropic's max_tokens and anthropic-version are not required, and
// completions have no default max_tokens (the real API defaults to 16).
//
// Authentication: a request needs "Authorization: Bearer <anything>" or a
// non-empty "x-api-key" header, else 401 in the provider's error shape;
// Gemini needs x-goog-api-key or key= (else 403), Ollama nothing.
// Unparsable or non-object JSON, a missing model, messages or prompt answer
// 400 in the provider's error shape.
package fakeupstream

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options change the server's behaviour. All zero values give a normal
// deterministic server.
type Options struct {
	// Nondeterministic appends " [run N]" (N = call counter) to every text
	// answer, so identical requests get different content.
	Nondeterministic bool
	// ModelSuffix is appended to the request model to form the served model
	// (simulates a silent model change).
	ModelSuffix string
	// ContentPrefix is prepended to every text answer (drift).
	ContentPrefix string
	// FailStatus, when non-zero, makes every call to a known endpoint answer
	// this status with a provider-shaped error body (checked before auth).
	FailStatus int
	// ResetMidStream makes streamed calls send two events, then hijack and
	// close the TCP connection abruptly (SO_LINGER 0: the peer gets a RST).
	ResetMidStream bool
	// FirstByteDelay is waited before the first byte of a successful answer
	// (stream headers + first event, or the whole JSON answer).
	FirstByteDelay time.Duration
	// ChunkDelay is waited between two stream events.
	ChunkDelay time.Duration
	// RejectIncludeUsage makes OpenAI calls whose stream_options contains
	// include_usage answer 400 invalid_request_error (like some
	// OpenAI-compatible servers).
	RejectIncludeUsage bool
	// Gzip compresses non-streamed JSON bodies (answers and errors) with gzip
	// when the request's Accept-Encoding allows it.
	Gzip bool
	// MintIDs makes Responses ids (resp_, msg_, fc_, rs_, call_), Gemini
	// responseIds and the Responses/Ollama timestamps new on every call, as
	// the real APIs do; by default they are derived from the request alone,
	// so the same request gets the same answer, byte for byte.
	MintIDs bool
}

// Captured is a copy of one received request.
type Captured struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
}

// maxBody caps request bodies (the proxy caps at 32 MiB too).
const maxBody = 64 << 20

// createdBase is the "created" of call 0: 2026-01-01T00:00:00Z.
const createdBase = 1767225600

// Handler is the fake upstream as an http.Handler. New returns one; its
// methods are the same as Server's for in-process use.
type Handler struct {
	opts     atomic.Pointer[Options]
	requests atomic.Int64

	mu   sync.Mutex
	last Captured

	storeMu sync.Mutex
	stored  map[string]storedResponse // Responses API answers by id
	order   []string                  // ids in storage order, oldest first

	filesMu sync.Mutex
	files   map[string]object // uploaded files by id (files.go)
}

// NewHandler returns the fake upstream handler with its concrete type.
func NewHandler(opts Options) *Handler {
	h := &Handler{}
	h.SetOptions(opts)
	return h
}

// New returns the fake upstream as an http.Handler (a *Handler), for
// httptest or in-process use.
func New(opts Options) http.Handler { return NewHandler(opts) }

// SetOptions changes the behaviour for the following requests; safe for
// concurrent use.
func (h *Handler) SetOptions(opts Options) {
	o := opts
	h.opts.Store(&o)
}

// Options returns the current options.
func (h *Handler) Options() Options { return *h.opts.Load() }

// Requests returns the number of requests received (any path, any outcome).
func (h *Handler) Requests() int64 { return h.requests.Load() }

// LastRequest returns a copy of the last request received (zero if none).
func (h *Handler) LastRequest() Captured {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.last
	c.Header = c.Header.Clone()
	c.Body = bytes.Clone(c.Body)
	return c
}

func (h *Handler) capture(r *http.Request, body []byte) {
	c := Captured{
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		Header:   r.Header.Clone(),
		Body:     bytes.Clone(body),
	}
	h.mu.Lock()
	h.last = c
	h.mu.Unlock()
}

// Server is a running fake upstream on a loopback TCP port.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT (no path).
	URL string

	h         *Handler
	srv       *http.Server
	ln        net.Listener
	closeOnce sync.Once
}

// Start listens on 127.0.0.1:0 and serves the fake upstream.
func Start(opts Options) (*Server, error) { return StartOn("127.0.0.1:0", opts) }

// StartOn listens on addr (host:port) and serves the fake upstream. An
// unspecified host (":0", "0.0.0.0:0") is reported as 127.0.0.1 in URL.
func StartOn(addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	h := NewHandler(opts)
	s := &Server{
		h:  h,
		ln: ln,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 30 * time.Second,
		},
	}
	tcp, _ := ln.Addr().(*net.TCPAddr)
	host := "127.0.0.1"
	if tcp != nil && tcp.IP != nil && !tcp.IP.IsUnspecified() {
		host = tcp.IP.String()
	}
	port := "0"
	if tcp != nil {
		_, port, _ = net.SplitHostPort(tcp.String())
	}
	s.URL = "http://" + net.JoinHostPort(host, port)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server and closes every open connection. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() { _ = s.srv.Close() })
}

// Shutdown stops accepting connections and waits for in-flight requests
// (until ctx is done, then it closes them).
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		s.Close()
	}
	return err
}

// Addr is the listening address (host:port).
func (s *Server) Addr() string { return strings.TrimPrefix(s.URL, "http://") }

// Handler returns the server's handler.
func (s *Server) Handler() *Handler { return s.h }

// Requests returns the number of requests received.
func (s *Server) Requests() int64 { return s.h.Requests() }

// LastRequest returns a copy of the last request received.
func (s *Server) LastRequest() Captured { return s.h.LastRequest() }

// SetOptions changes the behaviour at runtime; safe for concurrent use.
func (s *Server) SetOptions(opts Options) { s.h.SetOptions(opts) }

// Options returns the current options.
func (s *Server) Options() Options { return s.h.Options() }
