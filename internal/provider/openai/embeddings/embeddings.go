// Package embeddings is the OpenAI embeddings wire format (POST
// …/v1/embeddings), which RAG applications call before chat. Embeddings
// never stream and generate no text: a record has tokens_used, latency_ms,
// the body (the vectors, as float arrays or base64 strings exactly as the
// API sent them) and no content or finish_reason (DESIGN §12.2).
package embeddings

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Endpoint is the embeddings key endpoint.
const Endpoint provider.Endpoint = "/v1/embeddings"

// Format is the embeddings format. The zero value is ready to use.
type Format struct {
	provider.OpenAIErrors
}

var _ provider.Format = Format{}

// New returns the embeddings format.
func New() Format { return Format{} }

// Provider is OpenAI.
func (Format) Provider() provider.Name { return provider.OpenAI }

// Endpoint is /v1/embeddings.
func (Format) Endpoint() provider.Endpoint { return Endpoint }

// Route owns POST paths ending in /embeddings (any prefix the base URL has).
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || !strings.HasSuffix(path, "/embeddings") {
		return "", false
	}
	return Endpoint, true
}

// OwnsRecord is false: format 1.0.0 had no embeddings records.
func (Format) OwnsRecord(map[string]any) bool { return false }

// Streams is never true: the API has no streaming embeddings.
func (Format) Streams(string, map[string]any) bool { return false }

// NormalizeStored drops every explicit top-level null (DESIGN §12.9 item 2).
func (Format) NormalizeStored(request map[string]any) {
	for k, v := range request {
		if v == nil {
			delete(request, k)
		}
	}
}

// KeyRequest is the request without stream fields (the rule every format
// shares; an embeddings request has none), a copy.
func (Format) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	return provider.WithoutStream(request)
}

// LiveBody is the request without stream fields (an embeddings request has none).
func (Format) LiveBody(request map[string]any) map[string]any { return provider.WithoutStream(request) }

// Fields: tokens_used = usage.total_tokens (no usage → provider.ErrNoUsage),
// usage verbatim, model; no content, no finish_reason (NoText). The body
// must hold a "data" array.
func (Format) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := provider.ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if _, ok := body["data"].([]any); !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /data is missing or not an array", provider.ErrMalformed)
	}
	usage, err := provider.UsageObject(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	total, ok := provider.AsInt(usage["total_tokens"])
	if !ok || total < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage/total_tokens is missing or not an integer ≥ 0", provider.ErrNoUsage)
	}
	f.TokensUsed, f.Usage, f.NoText = total, usage, true
	return f, nil
}

// NewAssembler returns an assembler that refuses every stream: an
// embeddings answer is never one.
func (Format) NewAssembler() provider.Assembler { return noStream{} }

type noStream struct{}

func (noStream) Write(p []byte) (int, error)   { return len(p), errNoStream }
func (noStream) Done() (map[string]any, error) { return nil, errNoStream }

var errNoStream = fmt.Errorf("%w: embeddings answers are never streams", provider.ErrMalformed)

// StreamContentType is SSE (no embeddings answer has it; see Streams).
func (Format) StreamContentType() string { return provider.SSEContentType }

// SynthesizeStream refuses: an embeddings request never streams.
func (Format) SynthesizeStream(map[string]any, bool, io.Writer, func()) error { return errNoStream }

// SynthesizeBody is nil: no embeddings snapshot comes from format 0.9.0.
func (Format) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any { return nil }

// Determinism: embeddings have neither temperature nor seed.
func (Format) Determinism() (temperature, seed string) { return "", "" }

// RecordSchema is the embeddings record definition.
func (Format) RecordSchema() string { return "#/$defs/embeddingsRecord" }
