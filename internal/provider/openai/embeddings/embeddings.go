// Package embeddings is the OpenAI embeddings wire format (POST
// …/v1/embeddings), which RAG applications call before chat. Embeddings
// never stream and generate no text: a record has tokens_used, latency_ms,
// the body (the vectors, as float arrays or base64 strings exactly as the
// API sent them) and no content or finish_reason (DESIGN §12.2).
package embeddings

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Endpoint is the embeddings key endpoint.
const Endpoint provider.Endpoint = "/v1/embeddings"

// Format is the embeddings format: OpenAI's embeddings wire
// (provider.OpenAIEmbeddings, which Azure OpenAI shares) on OpenAI's
// routes. The zero value is ready to use.
type Format struct {
	provider.OpenAIEmbeddings
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

// RecordSchema is the embeddings record definition.
func (Format) RecordSchema() string { return "#/$defs/embeddingsRecord" }
