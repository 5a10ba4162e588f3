// Package change classifies how one recorded answer differs from another
// (DESIGN §12.5, §12.8 "Diff classes", §12.9 item 7). `traceforge diff`
// classifies the snapshots a change touched; `verify --live` can classify a
// live answer against its recording with the same function, so both fail on
// the same `fail_on` classes.
package change

import (
	"fmt"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Class is one kind of answer change.
type Class string

// The classes, in report order.
const (
	ToolCalls  Class = "tool-calls" // tool-call names or parsed arguments
	Structure  Class = "structure"  // the answer is JSON and its value changed
	Finish     Class = "finish"     // finish_reason
	Text       Class = "text"       // the answer text, beyond whitespace
	Whitespace Class = "whitespace" // the answer text, whitespace only
)

// All lists every class in report order.
var All = []Class{ToolCalls, Structure, Finish, Text, Whitespace}

// DefaultFailOn is what fails when the config has no "fail_on": every class
// but whitespace.
func DefaultFailOn() []Class { return []Class{ToolCalls, Structure, Finish, Text} }

// ParseClass returns the class named s, or an error naming the allowed ones.
func ParseClass(s string) (Class, error) {
	for _, c := range All {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%q is not a change class (allowed: %s)", s, Names(All))
}

// Names joins classes with ", ".
func Names(cs []Class) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// StringChange is a changed text value.
type StringChange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// IntChange is a changed count.
type IntChange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Delta is To − From.
func (c IntChange) Delta() int64 { return c.To - c.From }

// ToolCall is what the comparison sees of one tool call: its name and the
// canonical JSON (RFC 8785) of its parsed arguments (the raw text when the
// arguments do not parse as JSON). Provider ids are not part of it.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func (t ToolCall) String() string { return t.Name + "(" + t.Arguments + ")" }

// ToolCallsChange lists the tool calls before and after.
type ToolCallsChange struct {
	From []ToolCall `json:"from"`
	To   []ToolCall `json:"to"`
}

// Result is how a new answer differs from an old one. A nil field did not
// change. Model, token and latency changes are reported but are never classes.
type Result struct {
	Classes      []Class          // in All order; empty when no class applies
	Content      *StringChange    // the answer text
	FinishReason *StringChange    // finish_reason
	ToolCalls    *ToolCallsChange // names or parsed arguments
	Model        *StringChange    // the served model (response.model)
	TokensUsed   *IntChange
	LatencyMS    *IntChange
}

// Has reports whether class c applies.
func (r Result) Has(c Class) bool {
	for _, x := range r.Classes {
		if x == c {
			return true
		}
	}
	return false
}

// Failing returns the classes of r that failOn lists, in All order.
func (r Result) Failing(failOn []Class) []Class {
	var out []Class
	for _, c := range r.Classes {
		for _, f := range failOn {
			if c == f {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// Changed reports whether anything Classify compares differs (classes,
// model, tokens or latency).
func (r Result) Changed() bool {
	return len(r.Classes) > 0 || r.Model != nil || r.TokensUsed != nil || r.LatencyMS != nil
}

// Classify compares the new answer with the old one:
//
//   - tool-calls: the number of tool calls, a name, or the canonical JSON of
//     parsed arguments differs (ids and other provider fields are ignored);
//   - structure: the answer text is a JSON object or array on either side
//     and the parsed values differ (a structure change is also a text change);
//   - finish: finish_reason differs;
//   - text: the text differs even after collapsing whitespace runs and trimming;
//   - whitespace: the text differs, but not after collapsing and trimming.
//
// Every class that applies is reported. Model, tokens and latency are
// reported as changes, never as classes.
func Classify(old, new snapshot.Response) Result {
	var r Result
	if a, b := toolCalls(old.ToolCalls), toolCalls(new.ToolCalls); !sameCalls(a, b) {
		r.ToolCalls = &ToolCallsChange{From: a, To: b}
		r.Classes = append(r.Classes, ToolCalls)
	}
	if old.Content != new.Content {
		r.Content = &StringChange{From: old.Content, To: new.Content}
		structure := structureChanged(old.Content, new.Content)
		if structure {
			r.Classes = append(r.Classes, Structure)
		}
		if old.FinishReason != new.FinishReason {
			r.Classes = append(r.Classes, Finish)
		}
		if structure || collapse(old.Content) != collapse(new.Content) {
			r.Classes = append(r.Classes, Text)
		} else {
			r.Classes = append(r.Classes, Whitespace)
		}
	} else if old.FinishReason != new.FinishReason {
		r.Classes = append(r.Classes, Finish)
	}
	if old.FinishReason != new.FinishReason {
		r.FinishReason = &StringChange{From: old.FinishReason, To: new.FinishReason}
	}
	if old.Model != new.Model {
		r.Model = &StringChange{From: old.Model, To: new.Model}
	}
	if old.TokensUsed != new.TokensUsed {
		r.TokensUsed = &IntChange{From: old.TokensUsed, To: new.TokensUsed}
	}
	if old.LatencyMS != new.LatencyMS {
		r.LatencyMS = &IntChange{From: old.LatencyMS, To: new.LatencyMS}
	}
	return r
}

// collapse replaces every whitespace run by one space and trims the ends.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// jsonAnswer parses an answer that is a JSON object or array.
func jsonAnswer(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return "", false
	}
	v, err := snapshot.Decode([]byte(t))
	if err != nil {
		return "", false
	}
	c, err := snapshot.Canonical(v)
	if err != nil {
		return "", false
	}
	return string(c), true
}

func structureChanged(a, b string) bool {
	ja, oka := jsonAnswer(a)
	jb, okb := jsonAnswer(b)
	switch {
	case oka && okb:
		return ja != jb
	default:
		return oka || okb // JSON on one side only: the structure broke or appeared
	}
}

func sameCalls(a, b []ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// toolCalls reduces stored tool calls to names and canonical arguments;
// the wire layer (provider.ToolCalls) knows where each format keeps them.
// A shape no format stores compares as its canonical JSON without ids.
func toolCalls(calls []any) []ToolCall {
	out := make([]ToolCall, 0, len(calls))
	for _, c := range provider.ToolCalls(calls) {
		if !c.Known {
			out = append(out, ToolCall{Name: c.Name, Arguments: canonical(c.Arguments)})
			continue
		}
		out = append(out, ToolCall{Name: c.Name, Arguments: arguments(c.Arguments)})
	}
	return out
}

// arguments is the canonical JSON of parsed arguments: a string is parsed
// as JSON when it can be (OpenAI sends arguments as a JSON string).
func arguments(v any) string {
	if s, ok := v.(string); ok {
		if pv, err := snapshot.Decode([]byte(s)); err == nil {
			return canonical(pv)
		}
		return s
	}
	return canonical(v)
}

func canonical(v any) string {
	b, err := snapshot.Canonical(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
