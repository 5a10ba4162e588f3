package gemini

import (
	"github.com/traceforge/traceforge/internal/provider"
)

// Generate is the generateContent format (streamed or not): Gemini's wire
// (provider.GeminiGenerate, which Vertex AI shares) on the Gemini API's
// routes. The zero value is ready to use.
type Generate struct{ provider.GeminiGenerate }

var (
	_ provider.Format     = Generate{}
	_ provider.PathBinder = Generate{}
)

// NewGenerate returns the generateContent format.
func NewGenerate() Generate { return Generate{} }

// Provider is Gemini.
func (Generate) Provider() provider.Name { return provider.Gemini }

// Endpoint is the pattern of the key endpoints; the concrete one comes from
// Route (the model and version are in the path).
func (Generate) Endpoint() provider.Endpoint { return generatePattern }

// Route owns POST …/{v1,v1beta,v1alpha}/models/{model}:generateContent and
// :streamGenerateContent, both keyed as :generateContent.
func (Generate) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, MethodGenerate, MethodStream)
}

// Streams iff the path is :streamGenerateContent (DESIGN §12.9 item 1); the
// body has no stream flag.
func (Generate) Streams(path string, _ map[string]any) bool {
	p, ok := ParsePath(path)
	return ok && p.Method == MethodStream
}

// BindPath puts the path's model into the stored request (bindPath).
func (Generate) BindPath(path string, request map[string]any) error { return bindPath(path, request) }

// RecordSchema is the generateContent record definition.
func (Generate) RecordSchema() string { return "#/$defs/geminiGenerateRecord" }
