// Package defaults implements the request defaults a project declares in
// .traceforge.json ("defaults", DESIGN §13.2): rules that fill in the
// members a request lacks (temperature, a max-tokens field, a seed…) before
// record forwards it, so that an application's unchanged calls satisfy the
// format's required fields without editing a call site.
//
// Semantics:
//   - A Set is a list of rules {"model": GLOB, "endpoint": GLOB (optional),
//     "set": {POINTER: VALUE, …}}. The first rule whose model glob matches
//     the request's model and whose endpoint glob (when given) matches its
//     key endpoint applies; later rules are not consulted.
//   - Each POINTER the request lacks is set to VALUE. An explicit null counts
//     as absent (traceforge stores an explicit null on an optional field as
//     absent anyway, DESIGN §11, §12.9 item 2): it is replaced. Any other
//     present value is never changed. Missing parent objects are created
//     ("/generationConfig/maxOutputTokens" on a request without
//     generationConfig); a parent that is present but not an object leaves
//     the pointer unset (the format's checks then name the problem).
//   - The pointers set are reported in the rule's order, which is the JCS
//     order of the pointers (sorted), so reformatting the config never
//     changes a record: this list is the record's "defaults_applied".
//
// Record applies a Set to what it forwards (EditRaw keeps every byte the
// application sent and adds the members), replay applies the same Set
// before keying, and verify recomputes it from each stored record (Stale).
package defaults

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ErrInvalid wraps every problem of a "defaults" list (a config error).
var ErrInvalid = errors.New("invalid defaults")

// Field is the record field listing the pointers a Set filled in.
const Field = "defaults_applied"

// Assign is one "set" member: a JSON pointer and the value it gets.
type Assign struct {
	Pointer string
	Tokens  []string
	Value   any
}

// Rule is one parsed entry of "defaults".
type Rule struct {
	Model    *Glob
	Endpoint *Glob // nil: any endpoint
	// When lists conditions on the request: the rule applies only when
	// each pointer holds exactly its value (JCS-equal), e.g.
	// {"/thinking/type": "enabled"} for Claude's extended thinking.
	When  []Assign
	Set   []Assign
	Index int // position in the list (reports name it /defaults/N)
}

// Set is a parsed "defaults" list; nil or empty applies nothing.
type Set struct {
	Rules []Rule
}

// Len is the number of rules (0 for nil).
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.Rules)
}

// reserved are the members a default may not set: they choose the model,
// the transport or the answer's shape rather than sampling.
var reserved = map[string]string{
	"model":          "the model is the request's own",
	"stream":         "streaming is the application's choice",
	"stream_options": "traceforge manages stream_options itself",
}

func invalid(ptr, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, ptr, fmt.Sprintf(format, args...))
}

// Parse parses the config's "defaults" value (decoded by snapshot.Decode).
func Parse(v any) (*Set, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, invalid("/defaults", `must be an array of rules ({"model": GLOB, "endpoint": GLOB, "set": {"/temperature": 0}})`)
	}
	s := &Set{}
	for i, e := range list {
		r, err := parseRule(fmt.Sprintf("/defaults/%d", i), e)
		if err != nil {
			return nil, err
		}
		r.Index = i
		s.Rules = append(s.Rules, r)
	}
	return s, nil
}

func parseRule(ptr string, v any) (Rule, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Rule{}, invalid(ptr, `must be an object such as {"model": "*", "set": {"/temperature": 0}}`)
	}
	var r Rule
	for k := range m {
		if k != "model" && k != "endpoint" && k != "when" && k != "set" {
			return Rule{}, invalid(ptr, "unknown field %q (allowed: model, endpoint, when, set)", k)
		}
	}
	model, ok := m["model"].(string)
	if !ok || model == "" {
		return Rule{}, invalid(ptr+"/model", `is required: a model name or glob ("*" matches any run of characters, "/" included)`)
	}
	g, err := CompileGlob(model)
	if err != nil {
		return Rule{}, invalid(ptr+"/model", "%v", err)
	}
	r.Model = g
	if ev, present := m["endpoint"]; present {
		e, ok := ev.(string)
		if !ok || e == "" {
			return Rule{}, invalid(ptr+"/endpoint", `must be a key endpoint or glob ("/v1/chat/completions", "*:generateContent")`)
		}
		if r.Endpoint, err = CompileGlob(e); err != nil {
			return Rule{}, invalid(ptr+"/endpoint", "%v", err)
		}
	}
	if wv, present := m["when"]; present {
		if r.When, err = ParseWhen(ptr+"/when", wv); err != nil {
			return Rule{}, err
		}
	}
	set, ok := m["set"].(map[string]any)
	if !ok || len(set) == 0 {
		return Rule{}, invalid(ptr+"/set", `is required: an object of JSON pointers and their values ({"/temperature": 0})`)
	}
	for p, val := range set {
		at := ptr + "/set/" + snapshot.EscapePointer(p)
		toks, err := parsePointer(p)
		if err != nil {
			return Rule{}, invalid(at, "%v", err)
		}
		if why, bad := reserved[toks[0]]; bad {
			return Rule{}, invalid(at, "%s cannot be a default: %s", p, why)
		}
		if val == nil {
			return Rule{}, invalid(at, "a default cannot be null (null counts as absent)")
		}
		r.Set = append(r.Set, Assign{Pointer: p, Tokens: toks, Value: val})
	}
	sort.Slice(r.Set, func(i, j int) bool { return r.Set[i].Pointer < r.Set[j].Pointer })
	for i := 1; i < len(r.Set); i++ {
		for j := 0; j < i; j++ {
			if strings.HasPrefix(r.Set[i].Pointer, r.Set[j].Pointer+"/") {
				return Rule{}, invalid(ptr+"/set", "%s is inside %s: set one or the other", r.Set[i].Pointer, r.Set[j].Pointer)
			}
		}
	}
	return r, nil
}

// parsePointer splits an RFC 6901 pointer into its unescaped tokens; the
// whole document ("") is not a member.
func parsePointer(s string) ([]string, error) {
	if !strings.HasPrefix(s, "/") || len(s) < 2 {
		return nil, fmt.Errorf("%q is not a JSON pointer to a member (e.g. \"/temperature\", \"/generationConfig/maxOutputTokens\")", s)
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		if t == "" {
			return nil, fmt.Errorf("%q has an empty member name", s)
		}
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("bad JSON pointer %q: \"~\" must be written ~0 (and \"/\" inside a name ~1)", s)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// For returns the first rule matching request's model, endpoint and the
// rule's conditions; nil when none.
func (s *Set) For(endpoint string, request map[string]any) *Rule {
	if s == nil {
		return nil
	}
	model, _ := request["model"].(string)
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.Model.Match(model) && r.Endpoint.Match(endpoint) && Holds(request, r.When) {
			return r
		}
	}
	return nil
}

// ParseWhen parses a "when" object: JSON pointers and the value each must
// hold.
func ParseWhen(at string, v any) ([]Assign, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, invalid(at, `must be an object of JSON pointers and the values they must hold ({"/thinking/type": "enabled"})`)
	}
	var out []Assign
	for p, val := range m {
		toks, err := parsePointer(p)
		if err != nil {
			return nil, invalid(at+"/"+snapshot.EscapePointer(p), "%v", err)
		}
		out = append(out, Assign{Pointer: p, Tokens: toks, Value: val})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out, nil
}

// Holds reports whether every condition holds in request: the pointer is
// present and its value is JCS-equal to the condition's (a null condition
// holds for an absent or null member).
func Holds(request map[string]any, when []Assign) bool {
	for _, c := range when {
		v, ok := lookup(request, c.Tokens)
		if c.Value == nil {
			if ok && v != nil {
				return false
			}
			continue
		}
		if !ok || !snapshot.SameJSON(v, c.Value) {
			return false
		}
	}
	return true
}

// ApplyDefaults fills the members request lacks under the first rule
// matching its model and endpoint, in place, and returns the pointers set
// (nil when none). It implements provider.RequestDefaults.
func (s *Set) ApplyDefaults(endpoint provider.Endpoint, request map[string]any) []string {
	if s.Len() == 0 || request == nil {
		return nil
	}
	r := s.For(string(endpoint), request)
	if r == nil {
		return nil
	}
	return r.apply(request, provider.EquivalentMembers(endpoint))
}

// Apply sets each of the rule's pointers that request lacks (absent or
// null), creating missing parent objects, and returns the pointers set in
// order.
func (r *Rule) Apply(request map[string]any) []string { return r.apply(request, nil) }

// apply is Apply where a pointer is also left alone when a member
// equivalent to it (provider.EquivalentMembers) is present: a request with
// max_tokens gets no max_completion_tokens.
func (r *Rule) apply(request map[string]any, equivalent [][]string) []string {
	var applied []string
	for _, a := range r.Set {
		if hasEquivalent(request, a.Pointer, equivalent) {
			continue
		}
		if set(request, a.Tokens, a.Value) {
			applied = append(applied, a.Pointer)
		}
	}
	return applied
}

func hasEquivalent(request map[string]any, ptr string, groups [][]string) bool {
	for _, g := range groups {
		if !slices.Contains(g, ptr) {
			continue
		}
		for _, other := range g {
			if other == ptr {
				continue
			}
			if toks, err := parsePointer(other); err == nil {
				if v, ok := lookup(request, toks); ok && v != nil {
					return true
				}
			}
		}
	}
	return false
}

// set puts value at toks inside m unless a non-null value is there or a
// parent on the way is present but not an object.
func set(m map[string]any, toks []string, value any) bool {
	cur := m
	for _, t := range toks[:len(toks)-1] {
		switch v := cur[t].(type) {
		case nil:
			// absent or null: created below
		case map[string]any:
			cur = v
			continue
		default:
			return false
		}
		next := map[string]any{}
		cur[t] = next
		cur = next
	}
	last := toks[len(toks)-1]
	if v, ok := cur[last]; ok && v != nil {
		return false
	}
	cur[last] = provider.DeepCopy(value)
	return true
}

// lookup returns the value at toks inside m.
func lookup(m map[string]any, toks []string) (any, bool) {
	var cur any = m
	for _, t := range toks {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = o[t]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Values returns the values of pointers inside request (after Apply), in
// order: what EditRaw writes.
func Values(request map[string]any, pointers []string) ([]any, error) {
	out := make([]any, len(pointers))
	for i, p := range pointers {
		toks, err := parsePointer(p)
		if err != nil {
			return nil, err
		}
		v, ok := lookup(request, toks)
		if !ok {
			return nil, fmt.Errorf("%s is not in the request", p)
		}
		out[i] = v
	}
	return out, nil
}
