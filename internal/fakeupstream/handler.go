package fakeupstream

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type endpoint int

const (
	epUnknown endpoint = iota
	epChat
	epCompletions
	epMessages
	epResponses
	epResponseGet
	epResponseDelete
	epResponseCancel
	epEmbeddings
	epGeminiGenerate
	epGeminiStream
	epGeminiEmbed
	epGeminiBatchEmbed
	epOllamaChat
	epOllamaGenerate
	epOllamaEmbed
	epVertexCountTokens
	epVertexPredict
	epVertexRawPredict
)

// family is the provider whose error shape and auth rules an endpoint uses.
type family int

const (
	famOpenAI family = iota
	famAnthropic
	famGemini
	famOllama
)

func (ep endpoint) family() family {
	switch ep {
	case epMessages, epVertexRawPredict:
		return famAnthropic
	case epGeminiGenerate, epGeminiStream, epGeminiEmbed, epGeminiBatchEmbed, epVertexCountTokens, epVertexPredict:
		return famGemini
	case epOllamaChat, epOllamaGenerate, epOllamaEmbed:
		return famOllama
	}
	return famOpenAI
}

// routed is where a request goes: the endpoint, and the model (Gemini, from
// the path) or the response id (Responses GET/DELETE).
type routed struct {
	ep     endpoint
	model  string
	id     string
	vertex bool // a Vertex AI path (vertex.go)
}

// geminiMethods maps the method after "models/{model}:" to its endpoint.
var geminiMethods = map[string]endpoint{
	"generateContent":       epGeminiGenerate,
	"streamGenerateContent": epGeminiStream,
	"embedContent":          epGeminiEmbed,
	"batchEmbedContents":    epGeminiBatchEmbed,
}

func route(r *http.Request) routed {
	p := r.URL.Path
	if id, ok := responseID(p); ok && r.Method == http.MethodGet {
		return routed{ep: epResponseGet, id: id}
	} else if ok && r.Method == http.MethodDelete {
		return routed{ep: epResponseDelete, id: id}
	}
	if r.Method != http.MethodPost {
		return routed{}
	}
	if rest, ok := strings.CutSuffix(p, "/cancel"); ok {
		if id, ok := responseID(rest); ok {
			return routed{ep: epResponseCancel, id: id}
		}
	}
	if rt, ok := routeVertex(p); ok {
		return rt
	}
	if rt, ok := routeGemini(p); ok {
		return rt
	}
	switch {
	case strings.HasSuffix(p, "/api/chat"):
		return routed{ep: epOllamaChat}
	case strings.HasSuffix(p, "/api/generate"):
		return routed{ep: epOllamaGenerate}
	case strings.HasSuffix(p, "/api/embed"):
		return routed{ep: epOllamaEmbed}
	case strings.HasSuffix(p, "/chat/completions"):
		return routed{ep: epChat}
	case strings.HasSuffix(p, "/completions"):
		return routed{ep: epCompletions}
	case strings.HasSuffix(p, "/messages"):
		return routed{ep: epMessages}
	case strings.HasSuffix(p, "/responses"):
		return routed{ep: epResponses}
	case strings.HasSuffix(p, "/embeddings"):
		return routed{ep: epEmbeddings}
	}
	return routed{}
}

// responseID returns {id} of a path ending in /responses/{id}.
func responseID(p string) (string, bool) {
	i := strings.LastIndex(p, "/responses/")
	if i < 0 {
		return "", false
	}
	id := p[i+len("/responses/"):]
	return id, id != "" && !strings.Contains(id, "/")
}

// routeGemini matches …/{v1,v1beta,v1alpha}/models/{model}:{method}.
func routeGemini(p string) (routed, bool) {
	i := strings.LastIndex(p, "/models/")
	if i < 0 {
		return routed{}, false
	}
	prefix := p[:i]
	if !strings.HasSuffix(prefix, "/v1") && !strings.HasSuffix(prefix, "/v1beta") && !strings.HasSuffix(prefix, "/v1alpha") {
		return routed{}, false
	}
	model, method, ok := strings.Cut(p[i+len("/models/"):], ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return routed{}, false
	}
	ep, ok := geminiMethods[method]
	if !ok {
		return routed{}, false
	}
	return routed{ep: ep, model: model}, true
}

// call is one request being answered.
type call struct {
	w    http.ResponseWriter
	r    *http.Request
	n    int64 // call counter (1-based), source of every per-call id
	opts Options
	ep   endpoint
	rt   routed
	h    *Handler
	body []byte
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := h.requests.Add(1)
	opts := *h.opts.Load()
	body, readErr := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	h.capture(r, body)
	rt := route(r)
	c := &call{w: w, r: r, n: n, opts: opts, ep: rt.ep, rt: rt, h: h, body: body}
	if c.ep == epUnknown && readErr == nil && (c.serveExchange() || c.serveFiles()) {
		return // count tokens (exchanges.go), files (files.go)
	}

	if c.ep == epUnknown {
		c.ep = epChat // OpenAI error shape
		c.fail(http.StatusNotFound, "", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "")
		return
	}
	if readErr != nil {
		c.fail(http.StatusBadRequest, "", "could not read the request body: "+readErr.Error(), "")
		return
	}
	if len(body) > maxBody {
		c.fail(http.StatusRequestEntityTooLarge, "", "request body too large", "")
		return
	}
	if opts.FailStatus != 0 {
		c.fail(opts.FailStatus, "", failMessage(c.ep, opts.FailStatus), "")
		return
	}
	switch fam := c.ep.family(); {
	case c.rt.vertex && !vertexAuthorized(r):
		c.failVertexAuth()
		return
	case c.rt.vertex:
	case isAzure(r.URL.Path) && !azureAuthorized(r):
		c.fail(http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.", "")
		return
	case strings.Contains(r.URL.Path, "/openai/deployments/") && r.URL.Query().Get("api-version") == "":
		c.fail(http.StatusNotFound, "404", "Resource not found", "")
		return
	case isAzure(r.URL.Path):
	case fam == famGemini && !geminiAuthorized(r):
		c.fail(http.StatusForbidden, "",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API key or other form of API consumer identity to call this API.", "")
		return
	case fam == famAnthropic && !authorized(r):
		c.fail(http.StatusUnauthorized, "", "x-api-key header is required", "")
		return
	case fam == famOpenAI && !authorized(r):
		c.fail(http.StatusUnauthorized, "",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "")
		return
	}
	switch c.ep {
	case epResponseGet, epResponseDelete, epResponseCancel:
		c.serveResponseByID()
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		switch c.ep.family() {
		case famGemini:
			c.fail(http.StatusBadRequest, "", "Invalid JSON payload received. Expected a JSON object.", "")
			return
		case famOllama:
			c.fail(http.StatusBadRequest, "", "invalid request body: expected a JSON object", "")
			return
		}
		if c.ep == epMessages {
			c.fail(http.StatusBadRequest, "", "The request body is not valid JSON: expected a JSON object", "")
		} else {
			c.fail(http.StatusBadRequest, "",
				"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", "")
		}
		return
	}
	switch c.ep {
	case epChat:
		c.serveChat(body)
	case epCompletions:
		c.serveCompletions(body)
	case epMessages:
		c.serveMessages(body)
	case epVertexRawPredict:
		c.serveVertexRawPredict(body)
	case epVertexCountTokens:
		c.serveVertexCountTokens(body)
	case epVertexPredict:
		c.serveVertexPredict(body)
	case epResponses:
		c.serveResponses(body)
	case epEmbeddings:
		c.serveEmbeddings(body)
	case epGeminiGenerate, epGeminiStream:
		c.serveGeminiGenerate(body)
	case epGeminiEmbed, epGeminiBatchEmbed:
		c.serveGeminiEmbed(body)
	case epOllamaChat:
		c.serveOllamaChat(body)
	case epOllamaGenerate:
		c.serveOllamaGenerate(body)
	case epOllamaEmbed:
		c.serveOllamaEmbed(body)
	}
}

// geminiAuthorized reports whether a Gemini request carries a key, in the
// x-goog-api-key header or the key query parameter.
func geminiAuthorized(r *http.Request) bool {
	return strings.TrimSpace(r.Header.Get("x-goog-api-key")) != "" ||
		strings.TrimSpace(r.URL.Query().Get("key")) != ""
}

func authorized(r *http.Request) bool {
	if strings.TrimSpace(r.Header.Get("x-api-key")) != "" {
		return true
	}
	a := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(a) > len("bearer ") && strings.EqualFold(a[:len("bearer ")], "bearer ") {
		return strings.TrimSpace(a[len("bearer "):]) != ""
	}
	return false
}

// ---- ids ----

func (c *call) requestID() string { return fmt.Sprintf("req_fake%08d", c.n) }
func (c *call) created() int64    { return createdBase + c.n }

func (c *call) setCommonHeaders() {
	hd := c.w.Header()
	switch c.ep.family() {
	case famAnthropic:
		hd.Set("request-id", c.requestID())
	case famGemini:
		hd.Set("server-timing", "gfet4t7; dur=1")
	case famOllama:
	default:
		hd.Set("x-request-id", c.requestID())
		hd.Set("openai-processing-ms", "1")
	}
}

// ---- errors ----

type openAIError struct {
	Error openAIErrorBody `json:"error"`
}

type openAIErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

type anthropicError struct {
	Type      string             `json:"type"`
	Error     anthropicErrorBody `json:"error"`
	RequestID string             `json:"request_id"`
}

type anthropicErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// googleError is Google's error shape: {"error":{"code","message","status"}}.
type googleError struct {
	Error googleErrorBody `json:"error"`
}

type googleErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// ollamaError is Ollama's error shape: {"error":"…"}.
type ollamaError struct {
	Error string `json:"error"`
}

// googleStatus is the google.rpc.Code name Google sends with an HTTP status.
func googleStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

func failMessage(ep endpoint, status int) string {
	switch ep.family() {
	case famGemini:
		switch status {
		case 429:
			return "Resource has been exhausted (e.g. check quota)."
		case 500:
			return "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
		case 503:
			return "The model is overloaded. Please try again later."
		}
	case famOllama:
		switch status {
		case 500:
			return "llama runner process has terminated: exit status 2"
		case 503:
			return "server busy, please try again.  maximum pending requests exceeded"
		}
	}
	if ep == epMessages {
		switch status {
		case 429:
			return "Number of request tokens has exceeded your per-minute rate limit"
		case 500:
			return "Internal server error"
		case 529:
			return "Overloaded"
		}
	} else {
		switch status {
		case 429:
			return "Rate limit reached for requests. Please try again later."
		case 500:
			return "The server had an error while processing your request. Sorry about that!"
		case 503:
			return "The engine is currently overloaded, please try again later"
		}
	}
	if t := http.StatusText(status); t != "" {
		return fmt.Sprintf("fake upstream: configured failure (%d %s)", status, t)
	}
	return fmt.Sprintf("fake upstream: configured failure (%d)", status)
}

// fail answers an error in the provider's shape. code and param are
// OpenAI-only and may be empty (null).
func (c *call) fail(status int, code, msg, param string) {
	if status < 100 || status > 999 {
		status = http.StatusInternalServerError
	}
	c.setCommonHeaders()
	switch c.ep.family() {
	case famGemini:
		c.writeJSON(status, googleError{Error: googleErrorBody{Code: status, Message: msg, Status: googleStatus(status)}}, "  ")
		return
	case famOllama:
		c.writeJSON(status, ollamaError{Error: msg}, "")
		return
	}
	if c.ep == epMessages || c.ep == epVertexRawPredict {
		c.writeJSON(status, anthropicError{
			Type:      "error",
			Error:     anthropicErrorBody{Type: anthropicErrorType(status), Message: msg},
			RequestID: c.requestID(),
		}, "")
		return
	}
	e := openAIErrorBody{Message: msg, Type: openAIErrorType(status)}
	if code == "" && status == http.StatusTooManyRequests {
		code = "rate_limit_exceeded"
	}
	if code != "" {
		e.Code = &code
	}
	if param != "" {
		e.Param = &param
	}
	c.writeJSON(status, openAIError{Error: e}, "    ")
}

// ---- JSON answers ----

func marshal(v any, indent string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		panic(err) // our own types always encode
	}
	b := buf.Bytes()
	if indent == "" {
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	return b
}

// writeJSON writes v as the JSON body (pretty-printed with indent when
// non-empty, like OpenAI; compact otherwise, like Anthropic), gzip-compressed
// when Options.Gzip and the request allows it.
func (c *call) writeJSON(status int, v any, indent string) {
	body := marshal(v, indent)
	hd := c.w.Header()
	hd.Set("Content-Type", "application/json")
	if c.opts.Gzip {
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(c.r.Header.Values("Accept-Encoding")) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(body)
			_ = zw.Close()
			body = buf.Bytes()
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(status)
	_, _ = c.w.Write(body)
}

// ok writes a successful non-streamed answer after FirstByteDelay.
func (c *call) ok(v any, indent string) {
	if sleepCtx(c.r.Context(), c.opts.FirstByteDelay) != nil {
		return
	}
	c.setCommonHeaders()
	c.writeJSON(http.StatusOK, v, indent)
}

// acceptsGzip reports whether Accept-Encoding values allow gzip.
func acceptsGzip(values []string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			fields := strings.Split(part, ";")
			coding := strings.ToLower(strings.TrimSpace(fields[0]))
			q := 1.0
			for _, p := range fields[1:] {
				p = strings.TrimSpace(p)
				if rest, ok := strings.CutPrefix(strings.ToLower(p), "q="); ok {
					if f, err := strconv.ParseFloat(rest, 64); err == nil {
						q = f
					}
				}
			}
			switch coding {
			case "gzip", "x-gzip":
				gzipQ = q
			case "*":
				starQ = q
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ---- SSE ----

var errStreamStopped = errors.New("stream stopped")

// stream writes server-sent events (or NDJSON lines, or a JSON array) with
// the configured delays and reset.
type stream struct {
	c           *call
	rc          *http.ResponseController
	contentType string
	eol         string // SSE line end: "\n", or "\r\n" (Google)
	started     bool
	events      int
	stopped     bool
}

func (c *call) newStream() *stream {
	return &stream{c: c, rc: http.NewResponseController(c.w), contentType: "text/event-stream", eol: "\n"}
}

// send writes one event ("event: name" line when name is non-empty, then
// "data: data", then a blank line) and flushes it.
func (s *stream) send(name string, data []byte) error {
	var buf bytes.Buffer
	if name != "" {
		buf.WriteString("event: ")
		buf.WriteString(name)
		buf.WriteString(s.eol)
	}
	buf.WriteString("data: ")
	buf.Write(data)
	buf.WriteString(s.eol)
	buf.WriteString(s.eol)
	return s.write(buf.Bytes())
}

// write sends one frame (the headers first) and flushes it, after
// FirstByteDelay (first frame) or ChunkDelay (the others); with
// ResetMidStream the third frame resets the connection instead.
func (s *stream) write(frame []byte) error {
	if s.stopped {
		return errStreamStopped
	}
	ctx := s.c.r.Context()
	if !s.started {
		if sleepCtx(ctx, s.c.opts.FirstByteDelay) != nil {
			s.stopped = true
			return errStreamStopped
		}
		s.c.setCommonHeaders()
		hd := s.c.w.Header()
		hd.Set("Content-Type", s.contentType)
		if s.contentType == "text/event-stream" {
			hd.Set("Cache-Control", "no-cache")
		}
		s.c.w.WriteHeader(http.StatusOK)
		s.started = true
	} else if sleepCtx(ctx, s.c.opts.ChunkDelay) != nil {
		s.stopped = true
		return errStreamStopped
	}
	if s.c.opts.ResetMidStream && s.events >= 2 {
		s.stopped = true
		s.reset()
		return errStreamStopped
	}
	if _, err := s.c.w.Write(frame); err != nil {
		s.stopped = true
		return errStreamStopped
	}
	if err := s.rc.Flush(); err != nil {
		s.stopped = true
		return errStreamStopped
	}
	s.events++
	return nil
}

func (s *stream) sendJSON(name string, v any) error { return s.send(name, marshal(v, "")) }

// reset closes the connection abruptly (RST when possible).
func (s *stream) reset() {
	conn, _, err := s.rc.Hijack()
	if err != nil {
		// Not hijackable (HTTP/2, recorder): abort the response instead.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
