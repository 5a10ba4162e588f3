package gemini

import (
	"fmt"
	"io"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Embed is the embedContent and batchEmbedContents format (what the SDKs'
// embedContent sends). Embeddings never stream. The zero value is ready to
// use.
type Embed struct{ wire }

var (
	_ provider.Format     = Embed{}
	_ provider.PathBinder = Embed{}
)

// NewEmbed returns the embeddings format.
func NewEmbed() Embed { return Embed{} }

// Endpoint is the pattern of the key endpoints; the concrete one comes from
// Route.
func (Embed) Endpoint() provider.Endpoint { return embedPattern }

// Route owns POST …/{v1,v1beta,v1alpha}/models/{model}:embedContent and
// :batchEmbedContents, each its own key endpoint.
func (Embed) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, MethodEmbed, MethodBatchEmbed)
}

// OwnsRecord: a stored Gemini request with "content" (embedContent) or
// "requests" (batchEmbedContents) is an embeddings request.
func (Embed) OwnsRecord(request map[string]any) bool {
	_, one := request["content"]
	_, batch := request["requests"]
	return one || batch
}

// Streams is false: embeddings answer with one JSON object.
func (Embed) Streams(string, map[string]any) bool { return false }

// Fields checks an embeddings answer ({"embedding":{"values":[…]}} or
// {"embeddings":[{"values":[…]},…]}) and derives what it has: Gemini's
// embeddings report no usage, so TokensUsed is set only when usageMetadata
// carries totalTokenCount (else NoTokens: DESIGN §12.9 item 2, absent,
// never guessed), and there is no content or finish reason (NoText).
func (Embed) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	f := snapshot.Fields{NoText: true}
	switch {
	case body["embedding"] != nil:
		if err := checkEmbedding("/embedding", body["embedding"]); err != nil {
			return snapshot.Fields{}, err
		}
	case body["embeddings"] != nil:
		list, ok := body["embeddings"].([]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /embeddings is %s, not an array", provider.ErrMalformed, provider.TypeName(body["embeddings"]))
		}
		for i, e := range list {
			if err := checkEmbedding(fmt.Sprintf("/embeddings/%d", i), e); err != nil {
				return snapshot.Fields{}, err
			}
		}
	default:
		return snapshot.Fields{}, fmt.Errorf("%w: the answer has neither /embedding nor /embeddings", provider.ErrMalformed)
	}
	usage, total, err := usageMetadata(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if usage != nil {
		f.Usage = usage
	}
	if total >= 0 {
		f.TokensUsed = total
	} else {
		f.NoTokens = true
	}
	return f, nil
}

func checkEmbedding(ptr string, v any) error {
	e, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: %s is %s, not an object", provider.ErrMalformed, ptr, provider.TypeName(v))
	}
	if _, ok := e["values"].([]any); !ok {
		return fmt.Errorf("%w: %s/values is %s, not an array", provider.ErrMalformed, ptr, provider.TypeName(e["values"]))
	}
	return nil
}

// errNoStream: embeddings have no stream to assemble or synthesize.
var errNoStream = fmt.Errorf("%w: Gemini embeddings do not stream", provider.ErrMalformed)

// NewAssembler returns an assembler that refuses any stream.
func (Embed) NewAssembler() provider.Assembler { return provider.NoStream(errNoStream) }

// StreamContentType is SSE (never used: embeddings do not stream).
func (Embed) StreamContentType() string { return provider.SSEContentType }

// SynthesizeStream refuses: embeddings do not stream.
func (Embed) SynthesizeStream(map[string]any, bool, io.Writer, func()) error { return errNoStream }

// RecordSchema is the embeddings record definition.
func (Embed) RecordSchema() string { return "#/$defs/geminiEmbedRecord" }

// Determinism: embeddings have no temperature or seed.
func (Embed) Determinism() (temperature, seed string) { return "", "" }
