package provider

import (
	"fmt"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// MeaningDiff compares what two answers mean (DESIGN §13.3): the content,
// the finish reason and the tool calls — each by name and parsed arguments
// (a JSON string of arguments is compared by the canonical text of what it
// holds, so key order and spacing do not count; text that is not JSON is
// compared as it is). Ids, timestamps, the model's snapshot name and usage
// counts never count: prompt caching changes the usage of identical
// requests. It returns one line per difference, empty when the meaning is
// the same. Record's in-run nondeterminism uses it; Diff (every derived
// field) stays the comparison with a stored snapshot.
func MeaningDiff(a, b snapshot.Fields) []string {
	var out []string
	if a.Content != b.Content {
		out = append(out, "content: "+stringChange(a.Content, b.Content))
	}
	if a.FinishReason != b.FinishReason {
		out = append(out, fmt.Sprintf("finish_reason: %q → %q", a.FinishReason, b.FinishReason))
	}
	ta, tb := meaningKeys(a.ToolCalls), meaningKeys(b.ToolCalls)
	if len(ta) != len(tb) {
		out = append(out, fmt.Sprintf("tool_calls: %d → %d calls (%s → %s)", len(ta), len(tb), toolList(ta), toolList(tb)))
		return out
	}
	for i := range ta {
		if ta[i] != tb[i] {
			out = append(out, fmt.Sprintf("tool_calls[%d]: %s → %s", i, ta[i].String(), tb[i].String()))
		}
	}
	return out
}

// meaningKeys are toolKeys with arguments given as a JSON string parsed:
// their canonical text.
func meaningKeys(calls []any) []toolKey {
	keys := toolKeys(calls)
	tcs := ToolCalls(calls)
	for i, tc := range tcs {
		s, ok := tc.Arguments.(string)
		if !ok {
			continue
		}
		if v, err := DecodeValue([]byte(s)); err == nil {
			keys[i].args = snapshot.CanonicalText(v)
		}
	}
	return keys
}
