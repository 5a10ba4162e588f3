package provider

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// ResponsesSnapshotPrefix starts the key's previous_response_id of a
// chained Responses request: "snapshot:<parent snapshot id>" (DESIGN
// §12.2, §12.9 item 5).
const ResponsesSnapshotPrefix = "snapshot:"

// ResponsesWire implements the Format methods of OpenAI's Responses wire
// (POST …/responses) that do not depend on the route, shared by OpenAI's
// Responses format (internal/provider/openai/responses) and Azure
// OpenAI's /openai/v1/responses (internal/provider/azure): key rules,
// lineage, fields, typed-event stream assembly and synthesis, errors. The
// zero value is ready to use.
type ResponsesWire struct{ OpenAIErrors }

var _ Lineager = ResponsesWire{}

// Streams iff the body has "stream": true.
func (ResponsesWire) Streams(_ string, body map[string]any) bool { return StreamFlag(body) }

// NormalizeStored drops every explicit top-level null (DESIGN §12.9 item 2).
func (ResponsesWire) NormalizeStored(request map[string]any) {
	for k, v := range request {
		if v == nil {
			delete(request, k)
		}
	}
}

// responsesChainedItemTypes are the input item types whose "id" (msg_…, rs_…, fc_…)
// the key renumbers item_1, item_2, … (DESIGN §12.9 item 5).
var responsesChainedItemTypes = map[string]bool{"item_reference": true, "message": true, "reasoning": true, "function_call": true}

// KeyRequest is the key-only normalization (DESIGN §12.2, §12.9 item 5):
// stream and stream_options dropped; in input items, call_id of
// function_call and function_call_output renumbered call_1, call_2, … and
// the id of item_reference, message, reasoning and function_call items
// renumbered item_1, item_2, … in order of first appearance; last, a string
// previous_response_id that kc resolves becomes "snapshot:<parent id>".
// request is never modified.
func (ResponsesWire) KeyRequest(request map[string]any, kc *KeyContext) map[string]any {
	r := WithoutStream(request)
	if items, ok := r["input"].([]any); ok {
		calls := NewRenumberer("call_")
		ids := NewRenumberer("item_")
		r["input"] = RewriteEach(items, func(it map[string]any) {
			typ, _ := it["type"].(string)
			if id, ok := it["id"]; ok && responsesChainedItemTypes[typ] {
				it["id"] = ids.ID(id)
			}
			if id, ok := it["call_id"]; ok && (typ == "function_call" || typ == "function_call_output") {
				it["call_id"] = calls.ID(id)
			}
		})
	}
	if prev, ok := r["previous_response_id"].(string); ok {
		if parent, _, ok := kc.Resolve(prev); ok {
			r["previous_response_id"] = ResponsesSnapshotPrefix + parent
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
func (ResponsesWire) Lineage(request map[string]any, kc *KeyContext, parentID func(map[string]any) (string, error)) (string, int, bool, error) {
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
		if responsesAssistantItem(it) {
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

// responsesAssistantItem reports whether an input item is part of an assistant turn.
func responsesAssistantItem(v any) bool {
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
func (ResponsesWire) LiveBody(request map[string]any) map[string]any { return WithoutStream(request) }

// Fields derives the record's response fields from a response object
// (DESIGN §12.2): content = the output_text parts of message items joined;
// tool_calls = the function_call items verbatim (nil when none);
// finish_reason = status, or incomplete_details.reason when incomplete;
// tokens_used = usage.total_tokens (no usage → ErrNoUsage); usage
// verbatim; model. Reasoning items are not content; they stay in the body.
func (ResponsesWire) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	status, ok := body["status"].(string)
	if !ok || status == "" {
		return snapshot.Fields{}, fmt.Errorf("%w: /status is missing or not a string", ErrMalformed)
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
		return snapshot.Fields{}, fmt.Errorf("%w: /output is missing or not an array", ErrMalformed)
	}
	var text strings.Builder
	for i, v := range output {
		it, ok := v.(map[string]any)
		if !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /output/%d is %s, not an object", ErrMalformed, i, TypeName(v))
		}
		switch it["type"] {
		case "message":
			parts, _ := it["content"].([]any)
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok && pm["type"] == "output_text" {
					s, ok := pm["text"].(string)
					if !ok {
						return snapshot.Fields{}, fmt.Errorf("%w: /output/%d: an output_text part without a string text", ErrMalformed, i)
					}
					text.WriteString(s)
				}
			}
		case "function_call":
			f.ToolCalls = append(f.ToolCalls, DeepCopy(it))
		}
	}
	f.Content = text.String()
	usage, err := UsageObject(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	total, ok := AsInt(usage["total_tokens"])
	if !ok || total < 0 {
		return snapshot.Fields{}, fmt.Errorf("%w: /usage/total_tokens is missing or not an integer ≥ 0", ErrNoUsage)
	}
	f.TokensUsed, f.Usage = total, usage
	return f, nil
}

// NewAssembler returns the assembler of one Responses stream.
func (ResponsesWire) NewAssembler() Assembler { return &responsesAssembler{} }

// StreamContentType is SSE.
func (ResponsesWire) StreamContentType() string { return SSEContentType }

// SynthesizeBody is nil: no Responses snapshot comes from format 0.9.0.
func (ResponsesWire) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any {
	return nil
}

// Determinism: temperature 0; the Responses API has no seed (DESIGN §12.2).
func (ResponsesWire) Determinism() (temperature, seed string) { return "/temperature", "" }
