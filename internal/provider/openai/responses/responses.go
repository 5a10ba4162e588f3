// Package responses is the OpenAI Responses API wire format (POST
// …/v1/responses): the default of the Vercel AI SDK's openai(model) and of
// @openai/agents. Streams are typed SSE events (`event:` lines), stored as the
// response object of the final response.completed / response.incomplete /
// response.failed event. Other routes under /responses (retrieve, delete,
// cancel, input items) are not this format's: record forwards them without a
// snapshot and lists them.
package responses

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Endpoint is the Responses key endpoint.
const Endpoint provider.Endpoint = "/v1/responses"

// SnapshotPrefix starts the key's previous_response_id of a chained request:
// "snapshot:<parent snapshot id>" (DESIGN §12.2, §12.9 item 5).
const SnapshotPrefix = "snapshot:"

// Format is the Responses format. The zero value is ready to use.
type Format struct {
	provider.OpenAIErrors
}

var (
	_ provider.Format   = Format{}
	_ provider.Lineager = Format{}
)

// New returns the Responses format.
func New() Format { return Format{} }

// Provider is OpenAI.
func (Format) Provider() provider.Name { return provider.OpenAI }

// Endpoint is /v1/responses.
func (Format) Endpoint() provider.Endpoint { return Endpoint }

// Route owns POST paths ending in /responses (any prefix the base URL has);
// GET/DELETE …/responses/{id} and POST …/responses/{id}/cancel are not
// owned.
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || !strings.HasSuffix(path, "/responses") {
		return "", false
	}
	return Endpoint, true
}

// OwnsRecord is false: format 1.0.0 had no Responses records.
func (Format) OwnsRecord(map[string]any) bool { return false }

// Streams iff the body has "stream": true.
func (Format) Streams(_ string, body map[string]any) bool { return provider.StreamFlag(body) }

// NormalizeStored drops every explicit top-level null (DESIGN §12.9 item 2).
func (Format) NormalizeStored(request map[string]any) {
	for k, v := range request {
		if v == nil {
			delete(request, k)
		}
	}
}

// chainedItemTypes are the input item types whose "id" (msg_…, rs_…, fc_…)
// the key renumbers item_1, item_2, … (DESIGN §12.9 item 5).
var chainedItemTypes = map[string]bool{"item_reference": true, "message": true, "reasoning": true, "function_call": true}

// KeyRequest is the key-only normalization (DESIGN §12.2, §12.9 item 5):
// stream and stream_options dropped; in input items, call_id of
// function_call and function_call_output renumbered call_1, call_2, … and
// the id of item_reference, message, reasoning and function_call items
// renumbered item_1, item_2, … in order of first appearance; last, a string
// previous_response_id that kc resolves becomes "snapshot:<parent id>".
// request is never modified.
func (Format) KeyRequest(request map[string]any, kc *provider.KeyContext) map[string]any {
	r := provider.WithoutStream(request)
	if items, ok := r["input"].([]any); ok {
		calls := provider.NewRenumberer("call_")
		ids := provider.NewRenumberer("item_")
		r["input"] = provider.RewriteEach(items, func(it map[string]any) {
			typ, _ := it["type"].(string)
			if id, ok := it["id"]; ok && chainedItemTypes[typ] {
				it["id"] = ids.ID(id)
			}
			if id, ok := it["call_id"]; ok && (typ == "function_call" || typ == "function_call_output") {
				it["call_id"] = calls.ID(id)
			}
		})
	}
	if prev, ok := r["previous_response_id"].(string); ok {
		if parent, _, ok := kc.Resolve(prev); ok {
			r["previous_response_id"] = SnapshotPrefix + parent
		}
	}
	return r
}

// Lineage (DESIGN §12.8 "More settled details"): a request whose string
// previous_response_id kc resolves continues that snapshot (turn = its turn
// + 1); an unresolved one has no lineage (its key keeps the id verbatim).
// Without previous_response_id, the §11 rule applies to the input items: an
// assistant turn is a run of consecutive items with role "assistant" or type
// function_call, reasoning or item_reference; the parent is the request cut
// before the last run, turn = runs + 1.
func (Format) Lineage(request map[string]any, kc *provider.KeyContext, parentID func(map[string]any) (string, error)) (string, int, bool, error) {
	if prev, ok := request["previous_response_id"].(string); ok {
		parent, turn, ok := kc.Resolve(prev)
		if !ok {
			return "", 0, false, nil
		}
		return parent, turn + 1, true, nil
	}
	items, _ := request["input"].([]any)
	last, runs := -1, 0
	inRun := false
	for i, it := range items {
		if assistantItem(it) {
			if !inRun {
				last, runs, inRun = i, runs+1, true
			}
			continue
		}
		inRun = false
	}
	if runs == 0 {
		return "", 0, false, nil
	}
	cut := maps.Clone(request)
	cut["input"] = append([]any(nil), items[:last]...)
	id, err := parentID(cut)
	if err != nil {
		return "", 0, false, err
	}
	return id, runs + 1, true, nil
}

// assistantItem reports whether an input item is part of an assistant turn.
func assistantItem(v any) bool {
	it, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if it["role"] == "assistant" {
		return true
	}
	switch it["type"] {
	case "function_call", "reasoning", "item_reference":
		return true
	}
	return false
}

// LiveBody is the request without stream and stream_options.
func (Format) LiveBody(request map[string]any) map[string]any { return provider.WithoutStream(request) }

// Fields derives the record's response fields from a response object
// (DESIGN §12.2): content = the output_text parts of message items joined;
// tool_calls = the function_call items verbatim (nil when none);
// finish_reason = status, or incomplete_details.reason when incomplete;
// tokens_used = usage.total_tokens (no usage → provider.ErrNoUsage); usage
// verbatim; model. Reasoning items are not content; they stay in the body.
func (Format) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := provider.ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	status, ok := body["status"].(string)
	if !ok || status == "" {
		return snapshot.Fields{}, fmt.Errorf("%w: /status is missing or not a string", provider.ErrMalformed)
	}
	f.FinishReason = status
	if status == "incomplete" {
		if d, ok := body["incomplete_details"].(map[string]any); ok {
			if r, ok := d["reason"].(string); ok && r != "" {
				f.FinishReason = r
			}
		}
	}
	output, ok := body["output"].([]any)
	if !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /output is missing or not an array", provider.ErrMalformed)
	}
	var text strings.Builder
	for i, v := range output {
		it, ok := v.(map[string]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /output/%d is %s, not an object", provider.ErrMalformed, i, provider.TypeName(v))
		}
		switch it["type"] {
		case "message":
			parts, _ := it["content"].([]any)
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok && pm["type"] == "output_text" {
					s, ok := pm["text"].(string)
					if !ok {
						return snapshot.Fields{}, fmt.Errorf("%w: /output/%d: an output_text part without a string text", provider.ErrMalformed, i)
					}
					text.WriteString(s)
				}
			}
		case "function_call":
			f.ToolCalls = append(f.ToolCalls, provider.DeepCopy(it))
		}
	}
	f.Content = text.String()
	usage, err := provider.UsageObject(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	total, ok := provider.AsInt(usage["total_tokens"])
	if !ok || total < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage/total_tokens is missing or not an integer ≥ 0", provider.ErrNoUsage)
	}
	f.TokensUsed, f.Usage = total, usage
	return f, nil
}

// NewAssembler returns the assembler of one Responses stream.
func (Format) NewAssembler() provider.Assembler { return &assembler{} }

// StreamContentType is SSE.
func (Format) StreamContentType() string { return provider.SSEContentType }

// SynthesizeBody is nil: no Responses snapshot comes from format 0.9.0.
func (Format) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any { return nil }

// Determinism: temperature 0; the Responses API has no seed (DESIGN §12.2).
func (Format) Determinism() (temperature, seed string) { return "/temperature", "" }

// RecordSchema is the Responses record definition.
func (Format) RecordSchema() string { return "#/$defs/responsesRecord" }
