package provider

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Equal is the one equality of DESIGN §11: re-record "unchanged", in-run
// nondeterminism and live drift all use it. Two responses are equal when
// Content, FinishReason, TokensUsed, Model and ToolCalls are equal. Tool calls
// are compared in order, ignoring their provider-generated ids: OpenAI
// function calls by name and arguments (compared as strings, byte for byte),
// OpenAI custom tool calls by name and input, Anthropic tool_use blocks by name
// and the canonical JSON of input (key order and number spelling ignored).
// Everything else (usage breakdown, system_fingerprint, other body fields,
// stream) is a note (see Notes), never a change by itself.
func Equal(a, b snapshot.Fields) bool {
	return len(Diff(a, b)) == 0
}

// Diff returns one human-readable line per compared field that differs, e.g.
// `finish_reason: "stop" → "length"`. It is empty exactly when Equal is true.
func Diff(a, b snapshot.Fields) []string {
	var out []string
	if a.Content != b.Content {
		out = append(out, "content: "+stringChange(a.Content, b.Content))
	}
	if a.FinishReason != b.FinishReason {
		out = append(out, fmt.Sprintf("finish_reason: %q → %q", a.FinishReason, b.FinishReason))
	}
	if a.TokensUsed != b.TokensUsed {
		out = append(out, fmt.Sprintf("tokens_used: %d → %d", a.TokensUsed, b.TokensUsed))
	}
	if a.Model != b.Model {
		out = append(out, fmt.Sprintf("model: %q → %q", a.Model, b.Model))
	}
	ta, tb := toolKeys(a.ToolCalls), toolKeys(b.ToolCalls)
	if len(ta) != len(tb) {
		out = append(out, fmt.Sprintf("tool_calls: %d → %d calls (%s → %s)", len(ta), len(tb), toolList(ta), toolList(tb)))
	} else {
		for i := range ta {
			if ta[i] != tb[i] {
				out = append(out, fmt.Sprintf("tool_calls[%d]: %s → %s", i, ta[i].String(), tb[i].String()))
			}
		}
	}
	return out
}

type toolKey struct {
	kind, name, args string
}

func (k toolKey) String() string {
	return k.name + "(" + clip(k.args, 120) + ")"
}

func toolList(keys []toolKey) string {
	if len(keys) == 0 {
		return "none"
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// toolKeys reduces tool calls to what the one equality compares.
func toolKeys(calls []any) []toolKey {
	keys := make([]toolKey, 0, len(calls))
	for _, c := range calls {
		m, ok := c.(map[string]any)
		if !ok {
			keys = append(keys, toolKey{kind: "?", name: "?", args: canonical(c)})
			continue
		}
		switch {
		case isObject(m["function"]):
			fn := m["function"].(map[string]any)
			keys = append(keys, toolKey{kind: "function", name: str(fn["name"]), args: strOrJSON(fn["arguments"])})
		case isObject(m["custom"]):
			cu := m["custom"].(map[string]any)
			keys = append(keys, toolKey{kind: "custom", name: str(cu["name"]), args: strOrJSON(cu["input"])})
		case m["name"] != nil || m["input"] != nil:
			keys = append(keys, toolKey{kind: "tool_use", name: str(m["name"]), args: canonical(m["input"])})
		default:
			rest := make(map[string]any, len(m))
			for k, v := range m {
				if k != "id" {
					rest[k] = v
				}
			}
			keys = append(keys, toolKey{kind: "?", name: str(m["type"]), args: canonical(rest)})
		}
	}
	return keys
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strOrJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return canonical(v)
}

// canonical returns the RFC 8785 text of v (the same bytes ids and hashes
// are computed over), for comparing values.
func canonical(v any) string {
	b, err := snapshot.Canonical(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// stringChange shows a changed string: whole when short, otherwise a window
// around the first difference.
func stringChange(a, b string) string {
	if utf8.RuneCountInString(a) <= 80 && utf8.RuneCountInString(b) <= 80 {
		return fmt.Sprintf("%q → %q", a, b)
	}
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	start := max(i-20, 0)
	win := func(r []rune) string {
		end := min(start+60, len(r))
		s := fmt.Sprintf("%q", string(r[start:end]))
		if start > 0 {
			s = "…" + s
		}
		if end < len(r) {
			s += "…"
		}
		return s
	}
	return fmt.Sprintf("differs at character %d (lengths %d → %d): %s → %s", i+1, len(ra), len(rb), win(ra), win(rb))
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// maxNotes caps the lines Notes returns.
const maxNotes = 20

// Notes lists the differences between two response bodies that are not
// changes by themselves but are the likely cause of drift: system_fingerprint,
// the usage breakdown, and any other body field. Per-call identifiers (id,
// created, tool-call and tool_use ids) and the fields the one equality
// compares (model, content, finish/stop reason, tool calls) are left out:
// Diff reports the latter. Either body may be nil (a snapshot without a
// stored body). The "stream" flag is not part of a body; callers add that
// note themselves. At most 20 lines are returned.
func Notes(aBody, bBody map[string]any) []string {
	switch {
	case aBody == nil && bBody == nil:
		return nil
	case aBody == nil:
		return []string{"body: not stored → stored (the recorded reply was synthesized)"}
	case bBody == nil:
		return []string{"body: stored → not stored (the reply is synthesized)"}
	}
	var out []string
	walkDiff("", aBody, bBody, &out)
	if len(out) > maxNotes {
		extra := len(out) - maxNotes
		out = append(out[:maxNotes], fmt.Sprintf("… and %d more differences", extra))
	}
	return out
}

// ignoredNote reports whether a JSON pointer is a per-call identifier or a
// field the one equality compares.
func ignoredNote(ptr string) bool {
	seg := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	switch {
	case len(seg) == 1:
		switch seg[0] {
		case "id", "created", "model", "stop_reason":
			return true
		}
	case seg[0] == "choices" && len(seg) >= 3:
		switch seg[2] {
		case "text", "finish_reason":
			return len(seg) == 3
		case "message":
			if len(seg) >= 4 && (seg[3] == "content" || seg[3] == "tool_calls") {
				return true
			}
		}
	case seg[0] == "content" && len(seg) >= 3:
		switch seg[2] {
		case "text", "id", "name", "input":
			return true
		}
	}
	return false
}

// differ walks two JSON values and lists their differences by JSON pointer.
// Notes and PointerChanges are its two users.
type differ struct {
	ignore   func(ptr string) bool // skip a pointer and what is under it
	label    func(ptr string) string
	elements bool // list extra array elements one by one (else "N → M elements")
	clip     int
}

func walkDiff(ptr string, a, b any, out *[]string) {
	differ{ignore: ignoredNote, label: notePath, clip: 80}.walk(ptr, a, b, out)
}

// PointerChanges lists how b differs from a, one line per JSON pointer
// (RFC 6901, relative to the values): `/messages/1/content: "a" → "b"`, an
// added member or array element `/user: absent → "x"`, a removed one
// `/seed: 7 → absent`. Values are JCS, clipped to 80 characters; members in
// sorted order. Empty when a and b are equal.
func PointerChanges(a, b any) []string {
	var out []string
	differ{ignore: func(string) bool { return false }, label: func(p string) string {
		if p == "" {
			return "/"
		}
		return p
	}, elements: true, clip: 80}.walk("", a, b, &out)
	return out
}

func (d differ) walk(ptr string, a, b any, out *[]string) {
	if d.ignore(ptr) {
		return
	}
	ma, oka := a.(map[string]any)
	mb, okb := b.(map[string]any)
	if oka && okb {
		keys := make(map[string]bool)
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			va, ina := ma[k]
			vb, inb := mb[k]
			p := ptr + "/" + escapePointer(k)
			switch {
			case ina && inb:
				d.walk(p, va, vb, out)
			case !d.ignore(p) && ina:
				*out = append(*out, fmt.Sprintf("%s: %s → absent", d.label(p), clip(canonical(va), d.clip)))
			case !d.ignore(p):
				*out = append(*out, fmt.Sprintf("%s: absent → %s", d.label(p), clip(canonical(vb), d.clip)))
			}
		}
		return
	}
	sa, oka := a.([]any)
	sb, okb := b.([]any)
	if oka && okb {
		n := min(len(sa), len(sb))
		for i := 0; i < n; i++ {
			d.walk(fmt.Sprintf("%s/%d", ptr, i), sa[i], sb[i], out)
		}
		switch {
		case len(sa) == len(sb):
		case !d.elements:
			*out = append(*out, fmt.Sprintf("%s: %d → %d elements", d.label(ptr), len(sa), len(sb)))
		default:
			for i := n; i < len(sa); i++ {
				*out = append(*out, fmt.Sprintf("%s: %s → absent", d.label(fmt.Sprintf("%s/%d", ptr, i)), clip(canonical(sa[i]), d.clip)))
			}
			for i := n; i < len(sb); i++ {
				*out = append(*out, fmt.Sprintf("%s: absent → %s", d.label(fmt.Sprintf("%s/%d", ptr, i)), clip(canonical(sb[i]), d.clip)))
			}
		}
		return
	}
	ca, cb := canonical(a), canonical(b)
	if ca == cb {
		return
	}
	line := fmt.Sprintf("%s: %s → %s", d.label(ptr), clip(ca, d.clip), clip(cb, d.clip))
	if ptr == "/system_fingerprint" && !d.elements {
		line += " (the provider's backend configuration changed)"
	}
	*out = append(*out, line)
}

func notePath(ptr string) string {
	if ptr == "" {
		return "body"
	}
	return "body" + ptr
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
