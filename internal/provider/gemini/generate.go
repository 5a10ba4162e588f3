package gemini

import (
	"fmt"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Generate is the generateContent format (streamed or not). The zero value
// is ready to use.
type Generate struct{ wire }

var (
	_ provider.Format     = Generate{}
	_ provider.PathBinder = Generate{}
)

// NewGenerate returns the generateContent format.
func NewGenerate() Generate { return Generate{} }

// Endpoint is the pattern of the key endpoints; the concrete one comes from
// Route (the model and version are in the path).
func (Generate) Endpoint() provider.Endpoint { return generatePattern }

// Route owns POST …/{v1,v1beta,v1alpha}/models/{model}:generateContent and
// :streamGenerateContent, both keyed as :generateContent.
func (Generate) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, MethodGenerate, MethodStream)
}

// OwnsRecord: a stored Gemini request with "contents" is a generateContent
// request.
func (Generate) OwnsRecord(request map[string]any) bool {
	_, ok := request["contents"]
	return ok
}

// Streams iff the path is :streamGenerateContent (DESIGN §12.9 item 1); the
// body has no stream flag.
func (Generate) Streams(path string, _ map[string]any) bool {
	p, ok := ParsePath(path)
	return ok && p.Method == MethodStream
}

// Fields derives the response fields from a GenerateContentResponse (for a
// stream: the Assembler's result), DESIGN §12.2 and §12.9 item 2:
// content = the text of candidates[0].content.parts joined with "" (parts
// with "thought": true are not content); tool_calls = the parts that hold a
// functionCall, whole (so thoughtSignature survives), nil when none;
// finish_reason = candidates[0].finishReason; tokens_used =
// usageMetadata.totalTokenCount (absent → provider.ErrNoUsage); usage =
// usageMetadata verbatim; model = modelVersion. Nothing returned aliases
// body.
func (Generate) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	var f snapshot.Fields
	if m, ok := body["modelVersion"]; ok && m != nil {
		s, ok := m.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /modelVersion is %s, not a string", provider.ErrMalformed, provider.TypeName(m))
		}
		f.Model = s
	}
	cand, err := firstCandidate(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	parts, err := candidateParts(cand)
	if err != nil {
		return snapshot.Fields{}, err
	}
	var text strings.Builder
	for i, p := range parts {
		part, ok := p.(map[string]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /candidates/0/content/parts/%d is %s, not an object", provider.ErrMalformed, i, provider.TypeName(p))
		}
		if _, ok := part["functionCall"]; ok {
			f.ToolCalls = append(f.ToolCalls, provider.DeepCopy(part))
			continue
		}
		t, present := part["text"]
		if !present {
			continue
		}
		s, ok := t.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /candidates/0/content/parts/%d/text is %s, not a string", provider.ErrMalformed, i, provider.TypeName(t))
		}
		if thought, _ := part["thought"].(bool); thought {
			continue
		}
		text.WriteString(s)
	}
	f.Content = text.String()
	fr, ok := cand["finishReason"].(string)
	if !ok || fr == "" {
		return snapshot.Fields{}, fmt.Errorf("%w: /candidates/0/finishReason is %s, not a non-empty string", provider.ErrMalformed, provider.TypeName(cand["finishReason"]))
	}
	f.FinishReason = fr
	usage, total, err := usageMetadata(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if usage == nil || total < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usageMetadata/totalTokenCount is missing", provider.ErrNoUsage)
	}
	f.TokensUsed, f.Usage = total, usage
	return f, nil
}

// firstCandidate is candidates[0]; a body without candidates (a blocked
// prompt) is malformed, naming promptFeedback.blockReason when there is one.
func firstCandidate(body map[string]any) (map[string]any, error) {
	cands, ok := body["candidates"].([]any)
	if !ok || len(cands) == 0 {
		reason := ""
		if pf, ok := body["promptFeedback"].(map[string]any); ok {
			if r, ok := pf["blockReason"].(string); ok {
				reason = " (promptFeedback.blockReason " + r + ")"
			}
		}
		return nil, fmt.Errorf("%w: /candidates is %s, not a non-empty array%s", provider.ErrMalformed, provider.TypeName(body["candidates"]), reason)
	}
	c, ok := cands[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /candidates/0 is %s, not an object", provider.ErrMalformed, provider.TypeName(cands[0]))
	}
	return c, nil
}

// candidateParts is the candidate's content.parts; absent content (a
// candidate stopped for safety) has no parts.
func candidateParts(cand map[string]any) ([]any, error) {
	c, present := cand["content"]
	if !present || c == nil {
		return nil, nil
	}
	content, ok := c.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /candidates/0/content is %s, not an object", provider.ErrMalformed, provider.TypeName(c))
	}
	p, present := content["parts"]
	if !present || p == nil {
		return nil, nil
	}
	parts, ok := p.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: /candidates/0/content/parts is %s, not an array", provider.ErrMalformed, provider.TypeName(p))
	}
	return parts, nil
}

// usageMetadata returns a copy of body's usageMetadata and its
// totalTokenCount; nil and -1 when there is none, -1 alone when the count
// is missing.
func usageMetadata(body map[string]any) (map[string]any, int64, error) {
	u, present := body["usageMetadata"]
	if !present || u == nil {
		return nil, -1, nil
	}
	m, ok := u.(map[string]any)
	if !ok {
		return nil, -1, fmt.Errorf("%w: /usageMetadata is %s, not an object", provider.ErrMalformed, provider.TypeName(u))
	}
	t, present := m["totalTokenCount"]
	if !present || t == nil {
		return provider.DeepCopy(m).(map[string]any), -1, nil
	}
	n, ok := provider.AsInt(t)
	if !ok || n < 0 {
		return nil, -1, fmt.Errorf("%w: /usageMetadata/totalTokenCount is %s, not an integer ≥ 0", provider.ErrMalformed, provider.TypeName(t))
	}
	return provider.DeepCopy(m).(map[string]any), n, nil
}

// NewAssembler returns the assembler of one :streamGenerateContent?alt=sse
// stream (see assembler).
func (Generate) NewAssembler() provider.Assembler { return &assembler{} }

// StreamContentType is SSE.
func (Generate) StreamContentType() string { return provider.SSEContentType }

// StreamFramingHint: without ?alt=sse, :streamGenerateContent answers one
// JSON array.
func (Generate) StreamFramingHint() string {
	return "Gemini: add ?alt=sse to :streamGenerateContent, as the SDKs do"
}

// SynthesizeStream writes an alt=sse stream carrying body: one chunk per
// part of candidates[0].content.parts, in order (none: one chunk). Every
// chunk is the body's top-level members (usageMetadata, modelVersion,
// responseId, …) with a candidate holding that one part; the last chunk's
// candidate carries every member of the stored candidate (finishReason,
// safetyRatings, …), so assembling the stream gives back body. includeUsage
// is ignored: Gemini chunks always carry usageMetadata.
func (Generate) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	evs, err := events(body)
	if err != nil {
		return err
	}
	return provider.WriteEvents(evs, w, flush)
}

// RecordSchema is the generateContent record definition.
func (Generate) RecordSchema() string { return "#/$defs/geminiGenerateRecord" }

// Determinism: temperature and seed live in generationConfig (DESIGN
// §12.2).
func (Generate) Determinism() (temperature, seed string) {
	return "/generationConfig/temperature", "/generationConfig/seed"
}
