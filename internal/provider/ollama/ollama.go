// Package ollama is Ollama's native wire format (DESIGN §12.2): POST
// /api/chat (Chat), /api/generate (Generate) and /api/embed (Embed), under
// any path prefix. Chat and generate stream NDJSON unless the body says
// "stream": false (then one JSON object); embed never streams.
//
// Stored request: the body with explicit top-level nulls dropped. Key-only
// rules: "stream" is dropped (a streamed and an unstreamed call are the same
// call), and tool-call ids (assistant tool_calls[].id, tool messages'
// tool_call_id) are renumbered call_1, call_2, … like OpenAI's (DESIGN §4).
package ollama

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// The key endpoints.
const (
	ChatEndpoint     provider.Endpoint = "/api/chat"
	GenerateEndpoint provider.Endpoint = "/api/generate"
	EmbedEndpoint    provider.Endpoint = "/api/embed"
)

// wire is what the Ollama formats share.
type wire struct{ endpoint provider.Endpoint }

// Provider is Ollama.
func (wire) Provider() provider.Name { return provider.Ollama }

// Endpoint is the format's route.
func (w wire) Endpoint() provider.Endpoint { return w.endpoint }

// Route owns POST paths ending in the format's endpoint (any prefix).
func (w wire) Route(method, path string) (provider.Endpoint, bool) {
	if method != http.MethodPost || !strings.HasSuffix(path, string(w.endpoint)) {
		return "", false
	}
	return w.endpoint, true
}

// Streams unless the body has "stream": false (DESIGN §12.9 item 1).
func (wire) Streams(_ string, body map[string]any) bool {
	s, ok := body["stream"].(bool)
	return !ok || s
}

// NormalizeStored drops explicit top-level nulls (DESIGN §12.9 item 2).
func (wire) NormalizeStored(request map[string]any) { provider.DropTopLevelNulls(request) }

// KeyRequest drops "stream" and renumbers tool-call ids in messages.
func (wire) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	r := provider.WithoutStream(request)
	provider.RenumberToolCallIDs(r)
	return r
}

// LiveBody is the request with "stream": false: --live compares whole
// answers, and Ollama streams unless told not to.
func (wire) LiveBody(request map[string]any) map[string]any {
	r := provider.WithoutStream(request)
	r["stream"] = false
	return r
}

// SynthesizeBody is nil: there are no body-less Ollama snapshots.
func (wire) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any { return nil }

// StreamContentType is NDJSON.
func (wire) StreamContentType() string { return provider.NDJSONContentType }

// ErrorBody is Ollama's {"error": message}; typ and code are unused.
func (wire) ErrorBody(_, _, message string) []byte {
	return provider.MarshalOrdered("error", message)
}

// ErrorType is "" for every status: Ollama errors carry only a message.
func (wire) ErrorType(int) string { return "" }

// MissError has neither type nor code in Ollama's shape.
func (wire) MissError() (typ, code string) { return "", "" }

// Determinism: temperature and seed live in options (DESIGN §12.2). Embed
// overrides it: embeddings have neither.
func (wire) Determinism() (temperature, seed string) { return "/options/temperature", "/options/seed" }

// counters is prompt_eval_count + eval_count (DESIGN §12.9 item 2: a missing
// counter counts 0).
func counters(body map[string]any, names ...string) (int64, error) {
	var total int64
	for _, k := range names {
		v, present := body[k]
		if !present || v == nil {
			continue
		}
		n, ok := provider.AsInt(v)
		if !ok || n < 0 {
			return 0, fmt.Errorf("%w: /%s is %s, not an integer ≥ 0", provider.ErrMalformed, k, provider.TypeName(v))
		}
		total += n
	}
	return total, nil
}

// common derives model, finish_reason and tokens_used of a final chat or
// generate body: done must be true, done_reason a string.
func common(body map[string]any) (snapshot.Fields, error) {
	f, err := provider.ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if done, _ := body["done"].(bool); !done {
		return snapshot.Fields{}, fmt.Errorf("%w: /done is %s, not true", provider.ErrMalformed, provider.TypeName(body["done"]))
	}
	dr, ok := body["done_reason"].(string)
	if !ok || dr == "" {
		return snapshot.Fields{}, fmt.Errorf("%w: /done_reason is %s, not a non-empty string", provider.ErrMalformed, provider.TypeName(body["done_reason"]))
	}
	f.FinishReason = dr
	if f.TokensUsed, err = counters(body, "prompt_eval_count", "eval_count"); err != nil {
		return snapshot.Fields{}, err
	}
	return f, nil
}

// optString reads an optional string member ("" when absent or null).
func optString(m map[string]any, key, ptr string) (string, error) {
	v, present := m[key]
	if !present || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s/%s is %s, not a string", provider.ErrMalformed, ptr, key, provider.TypeName(v))
	}
	return s, nil
}
