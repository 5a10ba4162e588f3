package gemini

import (
	"github.com/traceforge/traceforge/internal/provider"
)

// Embed is the embedContent and batchEmbedContents format: Gemini's wire
// (provider.GeminiEmbed) on the Gemini API's routes. Embeddings never
// stream. The zero value is ready to use.
type Embed struct{ provider.GeminiEmbed }

var (
	_ provider.Format     = Embed{}
	_ provider.PathBinder = Embed{}
)

// NewEmbed returns the embeddings format.
func NewEmbed() Embed { return Embed{} }

// Provider is Gemini.
func (Embed) Provider() provider.Name { return provider.Gemini }

// Endpoint is the pattern of the key endpoints; the concrete one comes from
// Route.
func (Embed) Endpoint() provider.Endpoint { return embedPattern }

// Route owns POST …/{v1,v1beta,v1alpha}/models/{model}:embedContent and
// :batchEmbedContents, each its own key endpoint.
func (Embed) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, MethodEmbed, MethodBatchEmbed)
}

// BindPath puts the path's model into the stored request (bindPath).
func (Embed) BindPath(path string, request map[string]any) error { return bindPath(path, request) }

// RecordSchema is the embeddings record definition.
func (Embed) RecordSchema() string { return "#/$defs/geminiEmbedRecord" }
