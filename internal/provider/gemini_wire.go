package provider

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// This file is the machinery of Google's Gemini wire that the Gemini API
// (internal/provider/gemini) and Vertex AI's Gemini models
// (internal/provider/vertex) share: the stored normalization, the key, the
// live body, model binding, the response fields of generateContent and
// embedContent, stream assembly and synthesis (SSE, ?alt=sse) and Google's
// error shape. The formats embed GeminiGenerate or GeminiEmbed and add
// what depends on their routes (Provider, Endpoint, Route, Streams,
// BindPath, RecordSchema); they never import each other.

// GeminiWire is what every Gemini-wire format shares. The zero value is
// ready to use.
type GeminiWire struct{}

// GeminiBindModel puts a path's model into the stored request (DESIGN
// §12.9 item 4): "model" is added when the body has none; a body "model"
// other than model or "models/<model>" is refused (the error wraps
// ErrContradictsPath).
func GeminiBindModel(model string, request map[string]any) error {
	m, present := request["model"]
	if !present || m == nil {
		request["model"] = model
		return nil
	}
	if s, ok := m.(string); ok && (s == model || s == "models/"+model) {
		return nil
	}
	return fmt.Errorf("%w: the body's model %s differs from the model in the path (%s); send the model in the path only", ErrContradictsPath, quoteValue(m), model)
}

func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return TypeName(v)
}

// NormalizeStored drops explicit top-level nulls (DESIGN §12.9 item 2).
func (GeminiWire) NormalizeStored(request map[string]any) { DropTopLevelNulls(request) }

// KeyRequest is a copy of the stored request: Gemini's key-only list is
// empty (streaming is in the path, not the body).
func (GeminiWire) KeyRequest(request map[string]any, _ *KeyContext) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		r[k] = v
	}
	return r
}

// LiveBody is the request without the "model" the path carries
// (DESIGN §12.9 item 4: --live posts it to the stored endpoint).
func (GeminiWire) LiveBody(request map[string]any) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		if k != "model" {
			r[k] = v
		}
	}
	return r
}

// SynthesizeBody is nil: there are no body-less Gemini-wire snapshots
// (format 0.9.0 had neither Gemini nor Vertex AI).
func (GeminiWire) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any {
	return nil
}

// googleCodes maps the google.rpc.Code names traceforge answers with to
// their HTTP status.
var googleCodes = map[string]int{
	"INVALID_ARGUMENT":  http.StatusBadRequest,
	"PERMISSION_DENIED": http.StatusForbidden,
	"NOT_FOUND":         http.StatusNotFound,
	"INTERNAL":          http.StatusInternalServerError,
	"UNAVAILABLE":       http.StatusServiceUnavailable,
}

// ErrorBody is Google's shape {"error":{"code","message","status"}}: typ is
// the status name (ErrorType), code is unused.
func (GeminiWire) ErrorBody(typ, _, message string) []byte {
	code, ok := googleCodes[typ]
	if !ok {
		code = http.StatusBadRequest
	}
	return MarshalOrdered("error", Ordered("code", code, "message", message, "status", typ))
}

// ErrorType maps a status to a google.rpc.Code name. Google answers an
// unreachable backend with UNAVAILABLE; traceforge's 502 uses it too.
func (GeminiWire) ErrorType(status int) string {
	switch status {
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusInternalServerError:
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// MissError is NOT_FOUND (Google errors have no code besides the status).
func (GeminiWire) MissError() (typ, code string) { return "NOT_FOUND", "" }

// GeminiGenerate is the response side of generateContent (streamed or
// not). The zero value is ready to use.
type GeminiGenerate struct{ GeminiWire }

// OwnsRecord: a stored Gemini request with "contents" is a generateContent
// request.
func (GeminiGenerate) OwnsRecord(request map[string]any) bool {
	_, ok := request["contents"]
	return ok
}

// Fields derives the response fields from a GenerateContentResponse (for a
// stream: the Assembler's result), DESIGN §12.2 and §12.9 item 2:
// content = the text of candidates[0].content.parts joined with "" (parts
// with "thought": true are not content); tool_calls = the parts that hold a
// functionCall, whole (so thoughtSignature survives), nil when none;
// finish_reason = candidates[0].finishReason; tokens_used =
// usageMetadata.totalTokenCount (absent → ErrNoUsage); usage =
// usageMetadata verbatim; model = modelVersion. Nothing returned aliases
// body.
func (GeminiGenerate) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", ErrMalformed)
	}
	var f snapshot.Fields
	if m, ok := body["modelVersion"]; ok && m != nil {
		s, ok := m.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /modelVersion is %s, not a string", ErrMalformed, TypeName(m))
		}
		f.Model = s
	}
	cand, err := geminiFirstCandidate(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	parts, err := geminiCandidateParts(cand)
	if err != nil {
		return snapshot.Fields{}, err
	}
	var text strings.Builder
	for i, p := range parts {
		part, ok := p.(map[string]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /candidates/0/content/parts/%d is %s, not an object", ErrMalformed, i, TypeName(p))
		}
		if _, ok := part["functionCall"]; ok {
			f.ToolCalls = append(f.ToolCalls, DeepCopy(part))
			continue
		}
		t, present := part["text"]
		if !present {
			continue
		}
		s, ok := t.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /candidates/0/content/parts/%d/text is %s, not a string", ErrMalformed, i, TypeName(t))
		}
		if thought, _ := part["thought"].(bool); thought {
			continue
		}
		text.WriteString(s)
	}
	f.Content = text.String()
	fr, ok := cand["finishReason"].(string)
	if !ok || fr == "" {
		return snapshot.Fields{}, fmt.Errorf("%w: /candidates/0/finishReason is %s, not a non-empty string", ErrMalformed, TypeName(cand["finishReason"]))
	}
	f.FinishReason = fr
	usage, total, err := geminiUsageMetadata(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if usage == nil || total < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usageMetadata/totalTokenCount is missing", ErrNoUsage)
	}
	f.TokensUsed, f.Usage = total, usage
	return f, nil
}

// geminiFirstCandidate is candidates[0]; a body without candidates (a blocked
// prompt) is malformed, naming promptFeedback.blockReason when there is one.
func geminiFirstCandidate(body map[string]any) (map[string]any, error) {
	cands, ok := body["candidates"].([]any)
	if !ok || len(cands) == 0 {
		reason := ""
		if pf, ok := body["promptFeedback"].(map[string]any); ok {
			if r, ok := pf["blockReason"].(string); ok {
				reason = " (promptFeedback.blockReason " + r + ")"
			}
		}
		return nil, fmt.Errorf("%w: /candidates is %s, not a non-empty array%s", ErrMalformed, TypeName(body["candidates"]), reason)
	}
	c, ok := cands[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /candidates/0 is %s, not an object", ErrMalformed, TypeName(cands[0]))
	}
	return c, nil
}

// geminiCandidateParts is the candidate's content.parts; absent content (a
// candidate stopped for safety) has no parts.
func geminiCandidateParts(cand map[string]any) ([]any, error) {
	c, present := cand["content"]
	if !present || c == nil {
		return nil, nil
	}
	content, ok := c.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /candidates/0/content is %s, not an object", ErrMalformed, TypeName(c))
	}
	p, present := content["parts"]
	if !present || p == nil {
		return nil, nil
	}
	parts, ok := p.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: /candidates/0/content/parts is %s, not an array", ErrMalformed, TypeName(p))
	}
	return parts, nil
}

// geminiUsageMetadata returns a copy of body's usageMetadata and its
// totalTokenCount; nil and -1 when there is none, -1 alone when the count
// is missing.
func geminiUsageMetadata(body map[string]any) (map[string]any, int64, error) {
	u, present := body["usageMetadata"]
	if !present || u == nil {
		return nil, -1, nil
	}
	m, ok := u.(map[string]any)
	if !ok {
		return nil, -1, fmt.Errorf("%w: /usageMetadata is %s, not an object", ErrMalformed, TypeName(u))
	}
	t, present := m["totalTokenCount"]
	if !present || t == nil {
		return DeepCopy(m).(map[string]any), -1, nil
	}
	n, ok := AsInt(t)
	if !ok || n < 0 {
		return nil, -1, fmt.Errorf("%w: /usageMetadata/totalTokenCount is %s, not an integer ≥ 0", ErrMalformed, TypeName(t))
	}
	return DeepCopy(m).(map[string]any), n, nil
}

// NewAssembler returns the assembler of one :streamGenerateContent?alt=sse
// stream (see geminiAssembler).
func (GeminiGenerate) NewAssembler() Assembler { return &geminiAssembler{} }

// StreamContentType is SSE.
func (GeminiGenerate) StreamContentType() string { return SSEContentType }

// StreamFramingHint: without ?alt=sse, :streamGenerateContent answers one
// JSON array.
func (GeminiGenerate) StreamFramingHint() string {
	return "Gemini: add ?alt=sse to :streamGenerateContent, as the SDKs do"
}

// SynthesizeStream writes an alt=sse stream carrying body: one chunk per
// part of candidates[0].content.parts, in order (none: one chunk). Every
// chunk is the body's top-level members (usageMetadata, modelVersion,
// responseId, …) with a candidate holding that one part; the last chunk's
// candidate carries every member of the stored candidate (finishReason,
// safetyRatings, …), so assembling the stream gives back body. includeUsage
// is ignored: Gemini chunks always carry usageMetadata.
func (GeminiGenerate) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	evs, err := geminiEvents(body)
	if err != nil {
		return err
	}
	return WriteEvents(evs, w, flush)
}

// Determinism: temperature and seed live in generationConfig (DESIGN
// §12.2).
func (GeminiGenerate) Determinism() (temperature, seed string) {
	return "/generationConfig/temperature", "/generationConfig/seed"
}

// GeminiEmbed is the response side of embedContent and batchEmbedContents
// (what the SDKs' embedContent sends). Embeddings never stream. The zero
// value is ready to use.
type GeminiEmbed struct{ GeminiWire }

// OwnsRecord: a stored Gemini request with "content" (embedContent) or
// "requests" (batchEmbedContents) is an embeddings request.
func (GeminiEmbed) OwnsRecord(request map[string]any) bool {
	_, one := request["content"]
	_, batch := request["requests"]
	return one || batch
}

// Streams is false: embeddings answer with one JSON object.
func (GeminiEmbed) Streams(string, map[string]any) bool { return false }

// Fields checks an embeddings answer ({"embedding":{"values":[…]}} or
// {"embeddings":[{"values":[…]},…]}) and derives what it has: Gemini's
// embeddings report no usage, so TokensUsed is set only when usageMetadata
// carries totalTokenCount (else NoTokens: DESIGN §12.9 item 2, absent,
// never guessed), and there is no content or finish reason (NoText).
func (GeminiEmbed) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", ErrMalformed)
	}
	f := snapshot.Fields{NoText: true}
	switch {
	case body["embedding"] != nil:
		if err := geminiCheckEmbedding("/embedding", body["embedding"]); err != nil {
			return snapshot.Fields{}, err
		}
	case body["embeddings"] != nil:
		list, ok := body["embeddings"].([]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /embeddings is %s, not an array", ErrMalformed, TypeName(body["embeddings"]))
		}
		for i, e := range list {
			if err := geminiCheckEmbedding(fmt.Sprintf("/embeddings/%d", i), e); err != nil {
				return snapshot.Fields{}, err
			}
		}
	default:
		return snapshot.Fields{}, fmt.Errorf("%w: the answer has neither /embedding nor /embeddings", ErrMalformed)
	}
	usage, total, err := geminiUsageMetadata(body)
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

func geminiCheckEmbedding(ptr string, v any) error {
	e, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: %s is %s, not an object", ErrMalformed, ptr, TypeName(v))
	}
	if _, ok := e["values"].([]any); !ok {
		return fmt.Errorf("%w: %s/values is %s, not an array", ErrMalformed, ptr, TypeName(e["values"]))
	}
	return nil
}

// errGeminiNoStream: embeddings have no stream to assemble or synthesize.
var errGeminiNoStream = fmt.Errorf("%w: Gemini embeddings do not stream", ErrMalformed)

// NewAssembler returns an assembler that refuses any stream.
func (GeminiEmbed) NewAssembler() Assembler { return NoStream(errGeminiNoStream) }

// StreamContentType is SSE (never used: embeddings do not stream).
func (GeminiEmbed) StreamContentType() string { return SSEContentType }

// SynthesizeStream refuses: embeddings do not stream.
func (GeminiEmbed) SynthesizeStream(map[string]any, bool, io.Writer, func()) error {
	return errGeminiNoStream
}

// Determinism: embeddings have no temperature or seed.
func (GeminiEmbed) Determinism() (temperature, seed string) { return "", "" }
