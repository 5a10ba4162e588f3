package fakeupstream

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// BedrockOptions configure the fake Bedrock runtime.
type BedrockOptions struct {
	// Options give the answers' behaviour as for the other formats
	// (ContentPrefix, Nondeterministic, FailStatus, ChunkDelay).
	Options
	// AccessKeyID and SecretAccessKey are the only credentials whose SigV4
	// signatures are accepted; Region, when set, the only region.
	AccessKeyID, SecretAccessKey, Region string
}

// Bedrock is a fake Amazon Bedrock runtime API on a loopback port: POST
// /model/{modelId}/converse (JSON) and /converse-stream (AWS event-stream
// frames with :event-type, :content-type and :message-type headers, each
// event padded with "p" as Bedrock does), /invoke and
// /invoke-with-response-stream for Anthropic's models (see invoke), and
// /count-tokens (see countTokens). A request must carry either a
// SigV4 signature that its own credentials verify — recomputed with
// aws-sdk-go-v2's v4 signer over the method, the escaped path, the query,
// the signed headers and the body's SHA-256 — or a bearer token (a Bedrock
// API key); anything else is 403 InvalidSignatureException /
// AccessDeniedException, as AWS answers.
//
// Answers follow the other formats' rules (package doc): "Echo: " + the
// last user message's text, cut at inferenceConfig.maxTokens words
// (stopReason max_tokens); with toolConfig.tools and a user turn, a toolUse
// of the first tool (toolChoice.tool names another) with input built from
// its inputSchema.json; after toolResult blocks, "The tool returned: …".
// usage counts words (inputTokens, outputTokens, totalTokens).
type Bedrock struct {
	// URL is http://127.0.0.1:PORT.
	URL string

	opts     atomic.Pointer[BedrockOptions]
	requests atomic.Int64
	signed   atomic.Int64
	bearer   atomic.Int64
	mu       sync.Mutex
	last     Captured
	srv      *http.Server
}

// StartBedrock serves a fake Bedrock runtime on 127.0.0.1:0.
func StartBedrock(o BedrockOptions) (*Bedrock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := NewBedrock(o)
	b.URL = "http://" + ln.Addr().String()
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

// NewBedrock returns the fake as an http.Handler (no server).
func NewBedrock(o BedrockOptions) *Bedrock {
	b := &Bedrock{}
	b.SetOptions(o)
	return b
}

// SetOptions changes the behaviour for the following requests.
func (b *Bedrock) SetOptions(o BedrockOptions) { b.opts.Store(&o) }

// Close stops the server.
func (b *Bedrock) Close() {
	if b.srv != nil {
		_ = b.srv.Close()
	}
}

// Requests is the number of requests received.
func (b *Bedrock) Requests() int64 { return b.requests.Load() }

// Signed is the number of requests whose SigV4 signature verified.
func (b *Bedrock) Signed() int64 { return b.signed.Load() }

// Bearer is the number of requests accepted with a bearer token.
func (b *Bedrock) Bearer() int64 { return b.bearer.Load() }

// LastRequest is a copy of the last request received.
func (b *Bedrock) LastRequest() Captured {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.last
	c.Header = c.Header.Clone()
	c.Body = bytes.Clone(c.Body)
	return c
}

func (b *Bedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := b.requests.Add(1)
	o := *b.opts.Load()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	b.mu.Lock()
	b.last = Captured{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: bytes.Clone(body)}
	b.mu.Unlock()
	if err != nil {
		bedrockError(w, http.StatusBadRequest, "ValidationException", "could not read the body")
		return
	}
	model, op, ok := bedrockPath(r.URL.Path)
	invoke := op == "invoke" || op == "invoke-with-response-stream"
	if !ok || r.Method != http.MethodPost || (op != "converse" && op != "converse-stream" && op != "count-tokens" && !invoke) {
		bedrockError(w, http.StatusNotFound, "UnknownOperationException", "")
		return
	}
	if status, typ, msg := b.authenticate(r, body, o); status != 0 {
		bedrockError(w, status, typ, msg)
		return
	}
	if o.FailStatus != 0 {
		bedrockError(w, o.FailStatus, "ThrottlingException", "Too many requests, please wait before trying again.")
		return
	}
	if invoke {
		b.invoke(w, model, op == "invoke-with-response-stream", body, o)
		return
	}
	if op == "count-tokens" {
		b.countTokens(w, body, o)
		return
	}
	var req converseRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		bedrockError(w, http.StatusBadRequest, "ValidationException", "The provided request is not valid")
		return
	}
	c := &call{w: w, r: r, n: n, opts: o.Options, body: body}
	a := req.answer(c)
	w.Header().Set("x-amzn-RequestId", fmt.Sprintf("fake-%08d", n))
	if op == "converse" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(marshal(req.response(a), ""))
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for i, ev := range req.events(a) {
		if i > 0 && o.ChunkDelay > 0 {
			time.Sleep(o.ChunkDelay)
		}
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(ev.typ))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		payload := marshal(ev.payload.with("p", strings.Repeat("abcdefghij", 1+i%3)), "")
		if err := eventstream.NewEncoder().Encode(w, eventstream.Message{Headers: h, Payload: payload}); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// bedrockPath splits …/model/{modelId}/{operation} (decoded path).
func bedrockPath(p string) (model, op string, ok bool) {
	i := strings.Index(p, "/model/")
	if i < 0 {
		return "", "", false
	}
	rest := p[i+len("/model/"):]
	j := strings.LastIndexByte(rest, '/')
	if j <= 0 {
		return "", "", false
	}
	return rest[:j], rest[j+1:], true
}

// authenticate checks the request's SigV4 signature (or accepts a bearer
// token): status 0 when it may proceed.
func (b *Bedrock) authenticate(r *http.Request, body []byte, o BedrockOptions) (int, string, string) {
	auth := r.Header.Get("Authorization")
	if scheme, tok, _ := strings.Cut(auth, " "); strings.EqualFold(scheme, "Bearer") && tok != "" {
		b.bearer.Add(1)
		return 0, "", ""
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return http.StatusForbidden, "AccessDeniedException", "Missing Authentication Token"
	}
	var cred, signedHeaders, sig string
	for _, part := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signedHeaders = v
		case "Signature":
			sig = v
		}
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[0] != o.AccessKeyID {
		return http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	if o.Region != "" && scope[2] != o.Region {
		return http.StatusForbidden, "InvalidSignatureException", "Credential should be scoped to a valid region."
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return http.StatusForbidden, "InvalidSignatureException", "missing or malformed X-Amz-Date"
	}
	check, err := http.NewRequestWithContext(context.Background(), r.Method, "http://"+r.Host+r.RequestURI, nil)
	if err != nil {
		return http.StatusForbidden, "InvalidSignatureException", err.Error()
	}
	signed := strings.Split(signedHeaders, ";")
	if slices.Contains(signed, "content-length") {
		// The Go signer signs content-length when there is a body; botocore
		// does not: it is checked only when the client signed it.
		check.ContentLength = r.ContentLength
	}
	for _, name := range signed {
		if name == "host" || name == "content-length" {
			continue
		}
		for _, v := range r.Header.Values(name) {
			check.Header.Add(name, v)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, check, hex.EncodeToString(sum[:]), scope[3], scope[2], when); err != nil {
		return http.StatusForbidden, "InvalidSignatureException", err.Error()
	}
	want := check.Header.Get("Authorization")
	_, wantSig, _ := strings.Cut(want, "Signature=")
	if !hmac.Equal([]byte(wantSig), []byte(sig)) {
		return http.StatusForbidden, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."
	}
	b.signed.Add(1)
	return 0, "", ""
}

// bedrockError answers AWS's JSON error shape, its type in
// x-amzn-ErrorType.
func bedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-ErrorType", typ)
	w.WriteHeader(status)
	_, _ = w.Write(marshal(fields("message", msg), ""))
}

// converseRequest is what the fake reads of a Converse request.
type converseRequest struct {
	Messages []struct {
		Role    string                       `json:"role"`
		Content []map[string]json.RawMessage `json:"content"`
	} `json:"messages"`
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	InferenceConfig struct {
		MaxTokens int `json:"maxTokens"`
	} `json:"inferenceConfig"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec *struct {
				Name        string `json:"name"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice *struct {
			Tool *struct {
				Name string `json:"name"`
			} `json:"tool"`
		} `json:"toolChoice"`
	} `json:"toolConfig"`
}

// blockText is the text of a content block (and of a toolResult's text
// and json members when results).
func blockText(block map[string]json.RawMessage, results bool) (string, bool) {
	var s string
	if raw, ok := block["text"]; ok && json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	if raw, ok := block["toolResult"]; ok && results {
		var tr struct {
			Content []map[string]json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &tr)
		var out []string
		for _, c := range tr.Content {
			if t, _ := blockText(c, false); t != "" {
				out = append(out, t)
			} else if j, ok := c["json"]; ok {
				out = append(out, string(j))
			}
		}
		return strings.Join(out, " "), true
	}
	return "", false
}

// answer is the fake's answer to the request.
func (q *converseRequest) answer(c *call) answer {
	prompt := 0
	for _, s := range q.System {
		prompt += words(s.Text)
	}
	var lastUser string
	var results []string
	for i, m := range q.Messages {
		var texts []string
		results = results[:0]
		for _, b := range m.Content {
			t, isResult := blockText(b, true)
			prompt += words(t)
			if isResult {
				results = append(results, t)
			} else if t != "" {
				texts = append(texts, t)
			}
		}
		if i == len(q.Messages)-1 && m.Role == "user" {
			lastUser = strings.Join(texts, " ")
		} else {
			results = nil
		}
	}
	toolTurn := q.ToolConfig != nil && len(q.ToolConfig.Tools) > 0 && len(results) == 0
	pick := func() (string, json.RawMessage, bool) {
		want := ""
		if q.ToolConfig.ToolChoice != nil && q.ToolConfig.ToolChoice.Tool != nil {
			want = q.ToolConfig.ToolChoice.Tool.Name
		}
		for _, t := range q.ToolConfig.Tools {
			if t.ToolSpec != nil && (want == "" || t.ToolSpec.Name == want) {
				return t.ToolSpec.Name, t.ToolSpec.InputSchema.JSON, true
			}
		}
		return "", nil, false
	}
	a := c.reply(results, lastUser, toolTurn, pick, q.InferenceConfig.MaxTokens)
	for i := range a.calls {
		a.calls[i].id = "tooluse_" + strings.TrimPrefix(a.calls[i].id, "call_")
	}
	a.promptTokens = prompt
	return a
}

func (a answer) stopReason() string {
	switch {
	case len(a.calls) > 0:
		return "tool_use"
	case a.truncated:
		return "max_tokens"
	}
	return "end_turn"
}

func (a answer) usage() object {
	return fields("inputTokens", a.promptTokens, "outputTokens", a.completionTokens, "totalTokens", a.promptTokens+a.completionTokens)
}

// response is the Converse answer.
func (q *converseRequest) response(a answer) object {
	var content []any
	if len(a.calls) == 0 {
		content = append(content, fields("text", a.text))
	}
	for _, tc := range a.calls {
		content = append(content, fields("toolUse", fields("toolUseId", tc.id, "name", tc.name, "input", json.RawMessage(tc.args))))
	}
	return fields(
		"output", fields("message", fields("role", "assistant", "content", content)),
		"stopReason", a.stopReason(),
		"usage", a.usage(),
		"metrics", fields("latencyMs", 42),
	)
}

type streamEvent struct {
	typ     string
	payload object
}

// events are the ConverseStream events of the answer.
func (q *converseRequest) events(a answer) []streamEvent {
	evs := []streamEvent{{"messageStart", fields("role", "assistant")}}
	if len(a.calls) == 0 {
		for _, p := range textPieces(a.text) {
			evs = append(evs, streamEvent{"contentBlockDelta", fields("contentBlockIndex", 0, "delta", fields("text", p))})
		}
		evs = append(evs, streamEvent{"contentBlockStop", fields("contentBlockIndex", 0)})
	}
	for i, tc := range a.calls {
		evs = append(evs, streamEvent{"contentBlockStart", fields("start", fields("toolUse", fields("toolUseId", tc.id, "name", tc.name)), "contentBlockIndex", i)})
		for _, p := range bytePieces(tc.args, 8) {
			evs = append(evs, streamEvent{"contentBlockDelta", fields("contentBlockIndex", i, "delta", fields("toolUse", fields("input", p)))})
		}
		evs = append(evs, streamEvent{"contentBlockStop", fields("contentBlockIndex", i)})
	}
	evs = append(evs,
		streamEvent{"messageStop", fields("stopReason", a.stopReason())},
		streamEvent{"metadata", fields("usage", a.usage(), "metrics", fields("latencyMs", 42))})
	return evs
}

// invoke answers InvokeModel for an Anthropic model (anything else is a
// ValidationException): the body, Anthropic's Messages body with
// anthropic_version and no model, is answered by the fake's Messages
// endpoint; the stream's SSE events become "chunk" frames whose payload's
// bytes are each event's JSON, base64-encoded, message_stop carrying
// amazon-bedrock-invocationMetrics, ping events left out.
func (b *Bedrock) invoke(w http.ResponseWriter, model string, stream bool, body []byte, o BedrockOptions) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil || req["anthropic_version"] == nil || !strings.Contains(model, "anthropic.") {
		bedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
		return
	}
	delete(req, "anthropic_version")
	req["model"] = model[strings.LastIndex(model, "anthropic.")+len("anthropic."):]
	if stream {
		req["stream"] = true
	}
	inner := httptest.NewRecorder()
	in := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(marshal(req, "")))
	in.Header.Set("x-api-key", "bedrock")
	in.Header.Set("Content-Type", "application/json")
	NewHandler(o.Options).ServeHTTP(inner, in)
	if inner.Code != http.StatusOK {
		bedrockError(w, inner.Code, "ValidationException", inner.Body.String())
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(inner.Body.Bytes())
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, line := range strings.Split(inner.Body.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || strings.Contains(data, `"type":"ping"`) {
			continue
		}
		if strings.Contains(data, `"type":"message_stop"`) {
			data = `{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":1,"outputTokenCount":1,"invocationLatency":42,"firstByteLatency":7}}`
		}
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue("chunk"))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		payload := marshal(fields("bytes", base64.StdEncoding.EncodeToString([]byte(data)), "p", "abcdefgh"), "")
		if err := eventstream.NewEncoder().Encode(w, eventstream.Message{Headers: h, Payload: payload}); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// countTokens answers CountTokens: {"input": {"converse": {messages,
// system}}} or {"input": {"invokeModel": {"body": "…"}}}; inputTokens
// counts words as the answers' usage does.
func (b *Bedrock) countTokens(w http.ResponseWriter, body []byte, o BedrockOptions) {
	var in struct {
		Input struct {
			Converse    *converseRequest `json:"converse"`
			InvokeModel *struct {
				Body string `json:"body"`
			} `json:"invokeModel"`
		} `json:"input"`
	}
	if json.Unmarshal(body, &in) != nil || (in.Input.Converse == nil && in.Input.InvokeModel == nil) {
		bedrockError(w, http.StatusBadRequest, "ValidationException", "The provided request is not valid")
		return
	}
	n := 0
	if q := in.Input.Converse; q != nil {
		n = q.answer(&call{opts: o.Options}).promptTokens
	} else {
		n = words(in.Input.InvokeModel.Body)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(marshal(fields("inputTokens", n), ""))
}
