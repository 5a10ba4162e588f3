package provider

import (
	"fmt"
	"io"
	"time"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// OpenAIEmbeddings implements the Format methods of OpenAI's embeddings
// wire (POST …/embeddings) that do not depend on the route, shared by
// OpenAI's embeddings format (internal/provider/openai/embeddings) and
// Azure OpenAI's (internal/provider/azure). Embeddings never stream and
// generate no text. The zero value is ready to use.
type OpenAIEmbeddings struct{ OpenAIErrors }

// Streams is never true: the API has no streaming embeddings.
func (OpenAIEmbeddings) Streams(string, map[string]any) bool { return false }

// NormalizeStored drops every explicit top-level null (DESIGN §12.9 item 2).
func (OpenAIEmbeddings) NormalizeStored(request map[string]any) {
	for k, v := range request {
		if v == nil {
			delete(request, k)
		}
	}
}

// KeyRequest is the request without stream fields (the rule every format
// shares; an embeddings request has none), a copy.
func (OpenAIEmbeddings) KeyRequest(request map[string]any, _ *KeyContext) map[string]any {
	return WithoutStream(request)
}

// LiveBody is the request without stream fields (an embeddings request has none).
func (OpenAIEmbeddings) LiveBody(request map[string]any) map[string]any {
	return WithoutStream(request)
}

// Fields: tokens_used = usage.total_tokens (no usage → ErrNoUsage),
// usage verbatim, model; no content, no finish_reason (NoText). The body
// must hold a "data" array.
func (OpenAIEmbeddings) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if _, ok := body["data"].([]any); !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /data is missing or not an array", ErrMalformed)
	}
	usage, err := UsageObject(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	total, ok := AsInt(usage["total_tokens"])
	if !ok || total < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage/total_tokens is missing or not an integer ≥ 0", ErrNoUsage)
	}
	f.TokensUsed, f.Usage, f.NoText = total, usage, true
	return f, nil
}

// NewAssembler returns an assembler that refuses every stream: an
// embeddings answer is never one.
func (OpenAIEmbeddings) NewAssembler() Assembler { return NoStream(errEmbeddingsNoStream) }

// errEmbeddingsNoStream: an embeddings answer is never a stream.
var errEmbeddingsNoStream = fmt.Errorf("%w: embeddings answers are never streams", ErrMalformed)

// StreamContentType is SSE (no embeddings answer has it; see Streams).
func (OpenAIEmbeddings) StreamContentType() string { return SSEContentType }

// SynthesizeStream refuses: an embeddings request never streams.
func (OpenAIEmbeddings) SynthesizeStream(map[string]any, bool, io.Writer, func()) error {
	return errEmbeddingsNoStream
}

// SynthesizeBody is nil: no embeddings snapshot comes from format 0.9.0.
func (OpenAIEmbeddings) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any {
	return nil
}

// Determinism: embeddings have neither temperature nor seed.
func (OpenAIEmbeddings) Determinism() (temperature, seed string) { return "", "" }
