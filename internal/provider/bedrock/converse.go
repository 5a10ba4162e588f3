package bedrock

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Converse is the Converse format: POST /model/{modelId}/converse (JSON)
// and /converse-stream (event stream), one key endpoint
// /model/{modelId}/converse. The zero value is ready to use.
type Converse struct{ wire }

var (
	_ provider.Format     = Converse{}
	_ provider.PathBinder = Converse{}
)

// NewConverse returns the Converse format.
func NewConverse() Converse { return Converse{} }

// conversePattern is the pattern of Converse's key endpoints.
const conversePattern = "/model/{modelId}/converse"

// Endpoint is the pattern of the key endpoints; the concrete one comes from
// Route (the model id is in the path).
func (Converse) Endpoint() provider.Endpoint { return conversePattern }

// Route owns POST …/model/{modelId}/converse and /converse-stream, both
// keyed as /model/{modelId}/converse with the model id decoded.
func (Converse) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, OpConverse, OpConverse, OpConverseStream)
}

// Streams iff the path's operation is converse-stream.
func (Converse) Streams(path string, _ map[string]any) bool {
	p, ok := ParsePath(path)
	return ok && p.Op == OpConverseStream
}

// KeyRequest is a copy of the stored request whose toolUse ids
// (messages[].content[].toolUse.toolUseId) and toolResult ids
// (…toolResult.toolUseId) become call_1, call_2, … in order of first
// appearance (DESIGN §4). request is never modified.
func (Converse) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		r[k] = v
	}
	ids := provider.NewRenumberer("call_")
	provider.RewriteMessages(r, func(msg map[string]any) {
		content, ok := msg["content"].([]any)
		if !ok {
			return
		}
		msg["content"] = provider.RewriteEach(content, func(block map[string]any) {
			for _, member := range []string{"toolUse", "toolResult"} {
				inner, ok := block[member].(map[string]any)
				if !ok {
					continue
				}
				if id, ok := inner["toolUseId"]; ok {
					c := make(map[string]any, len(inner))
					for k, v := range inner {
						c[k] = v
					}
					c["toolUseId"] = ids.ID(id)
					block[member] = c
				}
			}
		})
	})
	return r
}

// Fields derives the response fields from a Converse response (for a
// stream: the assembled one, same shape): content = the text blocks of
// output.message.content joined with ""; tool_calls = its toolUse blocks
// ({"toolUse": {toolUseId, name, input}}) verbatim, nil when none;
// finish_reason = stopReason; tokens_used = usage.totalTokens (no usage →
// provider.ErrNoUsage); usage verbatim. Converse answers name no model.
// Nothing returned aliases body.
func (Converse) Fields(body map[string]any) (snapshot.Fields, error) {
	if body == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: no response body", provider.ErrMalformed)
	}
	var f snapshot.Fields
	blocks, err := messageContent(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	var text strings.Builder
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /output/message/content/%d is %s, not an object", provider.ErrMalformed, i, provider.TypeName(b))
		}
		if _, ok := block["toolUse"]; ok {
			f.ToolCalls = append(f.ToolCalls, provider.DeepCopy(block))
			continue
		}
		t, present := block["text"]
		if cc, ok := block["citationsContent"].(map[string]any); ok && !present {
			// A cited answer's text (assembled from text and citation deltas).
			parts, _ := cc["content"].([]any)
			for _, p := range parts {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					text.WriteString(s)
				}
			}
			continue
		}
		if !present {
			continue
		}
		s, ok := t.(string)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /output/message/content/%d/text is %s, not a string", provider.ErrMalformed, i, provider.TypeName(t))
		}
		text.WriteString(s)
	}
	f.Content = text.String()
	sr, ok := body["stopReason"].(string)
	if !ok || sr == "" {
		return snapshot.Fields{}, fmt.Errorf("%w: /stopReason is %s, not a non-empty string", provider.ErrMalformed, provider.TypeName(body["stopReason"]))
	}
	f.FinishReason = sr
	u, present := body["usage"]
	if !present || u == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage is missing", provider.ErrNoUsage)
	}
	usage, ok := u.(map[string]any)
	if !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage is %s, not an object", provider.ErrMalformed, provider.TypeName(u))
	}
	t, present := usage["totalTokens"]
	if !present || t == nil {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage/totalTokens is missing", provider.ErrNoUsage)
	}
	n, ok := provider.AsInt(t)
	if !ok || n < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage/totalTokens is %s, not an integer ≥ 0", provider.ErrMalformed, provider.TypeName(t))
	}
	f.TokensUsed = n
	f.Usage = provider.DeepCopy(usage).(map[string]any)
	return f, nil
}

// messageContent is output.message.content of a Converse response.
func messageContent(body map[string]any) ([]any, error) {
	out, ok := body["output"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /output is %s, not an object", provider.ErrMalformed, provider.TypeName(body["output"]))
	}
	msg, ok := out["message"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: /output/message is %s, not an object", provider.ErrMalformed, provider.TypeName(out["message"]))
	}
	c, present := msg["content"]
	if !present || c == nil {
		return nil, nil
	}
	blocks, ok := c.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: /output/message/content is %s, not an array", provider.ErrMalformed, provider.TypeName(c))
	}
	return blocks, nil
}

// NewAssembler returns the assembler of one ConverseStream event stream
// (see assembler).
func (Converse) NewAssembler() provider.Assembler { return &assembler{} }

// StreamContentType is AWS's event stream.
func (Converse) StreamContentType() string { return EventStreamContentType }

// SynthesizeStream writes a ConverseStream event stream carrying body,
// one frame (with valid CRCs) per Write: messageStart, per content block
// (contentBlockStart for a toolUse block), contentBlockDelta events
// (text and reasoning text in pieces; a toolUse block's input as one JSON
// string; a reasoning block's signature; other blocks are refused), and
// contentBlockStop, then messageStop (stopReason,
// additionalModelResponseFields) and metadata (usage, metrics, trace, and
// the other members of body). Assembling the stream gives back body.
// includeUsage is ignored: the metadata event always carries usage.
func (Converse) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	return provider.WriteLazily(w, flush, func(e *provider.Emitter) error { return synthesize(body, e) })
}

// SynthesizeBody is nil: there are no body-less Bedrock snapshots.
func (Converse) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any { return nil }

// Determinism: inferenceConfig.temperature; Bedrock has no seed.
func (Converse) Determinism() (temperature, seed string) { return "/inferenceConfig/temperature", "" }

// RecordSchema is the Converse record definition.
func (Converse) RecordSchema() string { return "#/$defs/bedrockConverseRecord" }
