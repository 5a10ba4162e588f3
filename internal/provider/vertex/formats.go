package vertex

import (
	"fmt"
	"io"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// The patterns of the key endpoints (Format.Endpoint); the concrete ones
// come from Route.
const (
	modelsPattern    = "/v1/projects/{project}/locations/{location}/publishers/"
	generatePattern  = modelsPattern + "google/models/{model}:" + MethodGenerate
	countPattern     = modelsPattern + "google/models/{model}:" + MethodCountTokens
	embedPattern     = modelsPattern + "google/models/{model}:" + MethodEmbed
	predictPattern   = modelsPattern + "google/models/{model}:" + MethodPredict
	rawPredictPatten = modelsPattern + "anthropic/models/{model}:" + MethodRawPredict
)

// Generate is generateContent and streamGenerateContent (one key) of
// Vertex AI's Gemini models: the Gemini wire (provider.GeminiGenerate).
type Generate struct{ provider.GeminiGenerate }

// Embed is embedContent of Vertex AI's Gemini embedding models: the Gemini
// wire (provider.GeminiEmbed).
type Embed struct{ provider.GeminiEmbed }

// CountTokens is countTokens: a Gemini request answered with
// {"totalTokens": N, …}; nothing is generated.
type CountTokens struct{ provider.GeminiWire }

// Predict is predict, Vertex AI's prediction call, which the SDKs use for
// the text-embedding models: {"instances": […], "parameters": {…}}
// answered with {"predictions": […], "metadata": {…}}.
type Predict struct{ provider.GeminiWire }

// RawPredict is Claude on Vertex AI, rawPredict and streamRawPredict (one
// key): Anthropic's Messages wire (provider.AnthropicWire) with
// "anthropic_version" in the body and the model in the path.
type RawPredict struct{ provider.AnthropicWire }

var (
	_ provider.Format     = Generate{}
	_ provider.PathBinder = Generate{}
	_ provider.Format     = Embed{}
	_ provider.PathBinder = Embed{}
	_ provider.Format     = CountTokens{}
	_ provider.PathBinder = CountTokens{}
	_ provider.Format     = Predict{}
	_ provider.PathBinder = Predict{}
	_ provider.Format     = RawPredict{}
	_ provider.PathBinder = RawPredict{}
)

// Provider is Vertex AI.
func (Generate) Provider() provider.Name    { return Name }
func (Embed) Provider() provider.Name       { return Name }
func (CountTokens) Provider() provider.Name { return Name }
func (Predict) Provider() provider.Name     { return Name }
func (RawPredict) Provider() provider.Name  { return Name }

// Endpoint is the pattern of the format's key endpoints.
func (Generate) Endpoint() provider.Endpoint    { return generatePattern }
func (Embed) Endpoint() provider.Endpoint       { return embedPattern }
func (CountTokens) Endpoint() provider.Endpoint { return countPattern }
func (Predict) Endpoint() provider.Endpoint     { return predictPattern }
func (RawPredict) Endpoint() provider.Endpoint  { return rawPredictPatten }

// Route owns POST …/publishers/google/models/{model}:generateContent and
// :streamGenerateContent, keyed as :generateContent.
func (Generate) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, PublisherGoogle, MethodGenerate, MethodStream)
}

// Route owns POST …/publishers/google/models/{model}:embedContent.
func (Embed) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, PublisherGoogle, MethodEmbed)
}

// Route owns POST …/publishers/google/models/{model}:countTokens.
func (CountTokens) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, PublisherGoogle, MethodCountTokens)
}

// Route owns POST …/publishers/google/models/{model}:predict.
func (Predict) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, PublisherGoogle, MethodPredict)
}

// Route owns POST …/publishers/anthropic/models/{model}:rawPredict and
// :streamRawPredict, keyed as :rawPredict (project and location required).
// …/models/count-tokens:rawPredict, where Anthropic's Vertex clients post
// count_tokens, is not a Messages call and not routed.
func (RawPredict) Route(method, path string) (provider.Endpoint, bool) {
	if p, ok := ParsePath(path); ok && p.Model == countTokensModel {
		return "", false
	}
	return route(method, path, PublisherAnthropic, MethodRawPredict, MethodStreamRawPre)
}

// countTokensModel is the model segment of Claude's count_tokens on Vertex
// AI.
const countTokensModel = "count-tokens"

// BindPath puts the path's model into the stored request (bindPath).
func (Generate) BindPath(path string, r map[string]any) error    { return bindPath(path, r) }
func (Embed) BindPath(path string, r map[string]any) error       { return bindPath(path, r) }
func (CountTokens) BindPath(path string, r map[string]any) error { return bindPath(path, r) }
func (Predict) BindPath(path string, r map[string]any) error     { return bindPath(path, r) }
func (RawPredict) BindPath(path string, r map[string]any) error  { return bindPath(path, r) }

// Streams iff the path is :streamGenerateContent; the body has no stream
// flag.
func (Generate) Streams(path string, _ map[string]any) bool {
	p, ok := ParsePath(path)
	return ok && p.Method == MethodStream
}

// Streams iff the path is :streamRawPredict or the body has "stream": true
// (the SDKs send both).
func (RawPredict) Streams(path string, body map[string]any) bool {
	p, ok := ParsePath(path)
	return (ok && p.Method == MethodStreamRawPre) || provider.StreamFlag(body)
}

// LiveBody is the request without the "model" the path carries and
// without stream and stream_options.
func (RawPredict) LiveBody(request map[string]any) map[string]any {
	r := provider.WithoutStream(request)
	delete(r, "model")
	return r
}

// OwnsRecord is false: Vertex AI came with format 1.2.0, whose records
// name their endpoint.
func (Generate) OwnsRecord(map[string]any) bool    { return false }
func (Embed) OwnsRecord(map[string]any) bool       { return false }
func (CountTokens) OwnsRecord(map[string]any) bool { return false }
func (Predict) OwnsRecord(map[string]any) bool     { return false }
func (RawPredict) OwnsRecord(map[string]any) bool  { return false }

// RecordSchema is the format's record definition.
func (Generate) RecordSchema() string    { return "#/$defs/vertexGenerateRecord" }
func (Embed) RecordSchema() string       { return "#/$defs/vertexEmbedRecord" }
func (CountTokens) RecordSchema() string { return "#/$defs/vertexCountTokensRecord" }
func (Predict) RecordSchema() string     { return "#/$defs/vertexPredictRecord" }
func (RawPredict) RecordSchema() string  { return "#/$defs/vertexRawPredictRecord" }

// Streams is false: countTokens answers one JSON object.
func (CountTokens) Streams(string, map[string]any) bool { return false }

// Fields checks a countTokens answer (totalTokens, an integer ≥ 0): no
// text is generated and no tokens are spent (NoText, NoTokens); the
// answer is the body.
func (CountTokens) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	if n, ok := provider.AsInt(body["totalTokens"]); !ok || n < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /totalTokens is %s, not an integer ≥ 0", provider.ErrMalformed, provider.TypeName(body["totalTokens"]))
	}
	return snapshot.Fields{NoText: true, NoTokens: true}, nil
}

// Streams is false: predict answers one JSON object.
func (Predict) Streams(string, map[string]any) bool { return false }

// Fields checks a predict answer (predictions, an array): no text and no
// token count (the embedding models report characters, not tokens spent;
// never guessed).
func (Predict) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	if _, ok := body["predictions"].([]any); !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /predictions is %s, not an array", provider.ErrMalformed, provider.TypeName(body["predictions"]))
	}
	return snapshot.Fields{NoText: true, NoTokens: true}, nil
}

// errNoStream: countTokens and predict have no stream.
var errNoStream = fmt.Errorf("%w: Vertex AI countTokens and predict do not stream", provider.ErrMalformed)

// NewAssembler refuses any stream.
func (CountTokens) NewAssembler() provider.Assembler { return provider.NoStream(errNoStream) }
func (Predict) NewAssembler() provider.Assembler     { return provider.NoStream(errNoStream) }

// StreamContentType is SSE (never used: no stream).
func (CountTokens) StreamContentType() string { return provider.SSEContentType }
func (Predict) StreamContentType() string     { return provider.SSEContentType }

// SynthesizeStream refuses: no stream.
func (CountTokens) SynthesizeStream(map[string]any, bool, io.Writer, func()) error {
	return errNoStream
}
func (Predict) SynthesizeStream(map[string]any, bool, io.Writer, func()) error { return errNoStream }

// Determinism: nothing is sampled.
func (CountTokens) Determinism() (temperature, seed string) { return "", "" }
func (Predict) Determinism() (temperature, seed string)     { return "", "" }
