package provider

import (
	"bytes"
	"io"
	"net/http"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// This file is the OpenAI machinery the chat and completions formats share
// (internal/provider/openai/chat, …/completions): both answer with choices,
// stream `data:` chunks ended by `data: [DONE]`, carry usage in streams only
// on request and use OpenAI's error shape. The formats embed these types and
// add what differs; they never import each other.

// OpenAIErrors implements Format's error methods in OpenAI's shape:
// {"error":{"message","type","param":null,"code"}}.
type OpenAIErrors struct{}

// ErrorBody is OpenAI's error object (code null when "").
func (OpenAIErrors) ErrorBody(typ, code, message string) []byte {
	var c any
	if code != "" {
		c = code
	}
	b, _ := Marshal(ordered{{"error", ordered{{"message", message}, {"type", typ}, {"param", nil}, {"code", c}}}})
	return b
}

// ErrorType is "server_error" from 500 on, else "invalid_request_error".
func (OpenAIErrors) ErrorType(status int) string {
	if status >= http.StatusInternalServerError {
		return "server_error"
	}
	return "invalid_request_error"
}

// MissError is the type and code of a replay miss.
func (OpenAIErrors) MissError() (typ, code string) {
	return "invalid_request_error", "traceforge_snapshot_not_found"
}

// OpenAIIncludeUsage implements UsageInjector for
// stream_options.include_usage.
type OpenAIIncludeUsage struct{}

// IncludesUsage reports stream_options.include_usage: true.
func (OpenAIIncludeUsage) IncludesUsage(body map[string]any) bool {
	so, _ := body["stream_options"].(map[string]any)
	b, _ := so["include_usage"].(bool)
	return b
}

// InjectUsage returns body with stream_options.include_usage set to true
// (DESIGN §6). When the body has no stream_options, the member is inserted
// after the opening brace and every other byte is kept; otherwise the object
// is re-encoded with the option merged in. false when body is not a JSON
// object or stream_options is not an object.
func (OpenAIIncludeUsage) InjectUsage(body []byte) ([]byte, bool) {
	v, err := snapshot.Decode(body)
	if err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	so, present := m["stream_options"]
	if !present {
		i := bytes.IndexByte(body, '{')
		rest := body[i+1:]
		sep := ","
		if t := bytes.TrimSpace(rest); len(t) > 0 && t[0] == '}' {
			sep = ""
		}
		out := make([]byte, 0, len(body)+40)
		out = append(out, body[:i+1]...)
		out = append(out, `"stream_options":{"include_usage":true}`...)
		out = append(out, sep...)
		return append(out, rest...), true
	}
	opts := map[string]any{}
	switch x := so.(type) {
	case nil:
	case map[string]any:
		for k, v := range x {
			opts[k] = v
		}
	default:
		return nil, false // malformed: the upstream answers it as it sees fit
	}
	opts["include_usage"] = true
	m["stream_options"] = opts
	out, err := Marshal(m)
	if err != nil {
		return nil, false
	}
	return out, true
}

// NewUsageStripper is the package's NewUsageStripper.
func (OpenAIIncludeUsage) NewUsageStripper(w io.Writer, flush func()) io.WriteCloser {
	return NewUsageStripper(w, flush)
}

// OpenAINormalizeStored is OpenAI's stored normalization: explicit nulls
// dropped (DropNullOptionals) and a "stop" string stored as a one-element
// array.
func OpenAINormalizeStored(request map[string]any) {
	DropNullOptionals(request)
	if s, ok := request["stop"].(string); ok {
		request["stop"] = []any{s}
	}
}

// OpenAIWire implements every Format method the choice-based OpenAI formats
// (chat completions, legacy completions) share: provider, endpoint,
// streaming flag, stored normalization, response fields, stream assembly and
// synthesis, error shape and usage injection. A format embeds it (built with
// NewOpenAIWire) and adds Route, OwnsRecord, KeyRequest and RecordSchema.
type OpenAIWire struct {
	OpenAIErrors
	OpenAIIncludeUsage
	endpoint Endpoint
}

// NewOpenAIWire returns the shared OpenAI machinery for endpoint
// (ChatCompletions or Completions).
func NewOpenAIWire(e Endpoint) OpenAIWire { return OpenAIWire{endpoint: e} }

// Provider is OpenAI.
func (OpenAIWire) Provider() Name { return OpenAI }

// Endpoint is the key endpoint given to NewOpenAIWire.
func (o OpenAIWire) Endpoint() Endpoint { return o.endpoint }

// Streams iff the body has "stream": true.
func (OpenAIWire) Streams(_ string, body map[string]any) bool { return StreamFlag(body) }

// NormalizeStored is OpenAINormalizeStored.
func (OpenAIWire) NormalizeStored(request map[string]any) { OpenAINormalizeStored(request) }

// LiveBody is the request without stream and stream_options.
func (OpenAIWire) LiveBody(request map[string]any) map[string]any { return WithoutStream(request) }

// StreamContentType is SSE.
func (OpenAIWire) StreamContentType() string { return SSEContentType }

// Determinism: chat and completions need temperature 0 and a seed.
func (OpenAIWire) Determinism() (temperature, seed string) { return "/temperature", "/seed" }
