// Package normalize implements the key normalizers a project declares in
// .traceforge.json ("normalize", DESIGN §12.3): rules that rewrite volatile
// values (dates, UUIDs, request ids) in the copy of a request that is keyed,
// never in what is stored. A Set is parsed once from the config and applied
// by the wire layer (registry) after the built-in key-only rules.
//
// Semantics (DESIGN §12.8, §12.9 item 3): rules apply in config order, each
// to the result of the previous one. paths are JSON pointers into the key
// request ("*" matches any array index or object key); a string rule
// rewrites every string value inside each selected subtree (object keys and
// numbers never); no paths means every string of the request. drop removes
// the selected members and array elements, highest index first. A rule
// changed the key when the key's JCS bytes differ before and after it,
// which for these rules is exactly "a string value changed or a member was
// removed".
package normalize

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Built-in string rules: each replaces every match of its pattern with
// "<name>" (DESIGN §12.8; docs/format.md copies the patterns).
var builtins = map[string]string{
	"uuid":         `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
	"ulid":         `\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b`,
	"iso-datetime": `\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?`,
	"date":         `\b\d{4}-\d{2}-\d{2}\b`,
	"unix-ms":      `\b1\d{12}\b`,
}

// Rule kinds besides the built-ins.
const (
	KindRegex = "regex"
	KindDrop  = "drop"
)

// RuleNames lists every accepted "rule" value, for error messages.
const RuleNames = "iso-datetime, date, uuid, ulid, unix-ms, regex, drop"

// BuiltinPattern returns the regular expression of built-in rule name.
func BuiltinPattern(name string) (string, bool) {
	p, ok := builtins[name]
	return p, ok
}

// Rule is one parsed entry of "normalize".
type Rule struct {
	// Kind is the "rule" value: a built-in name, "regex" or "drop".
	Kind string
	// Name is what key_normalizers and replay reports call the rule: the
	// built-in's name, a regex rule's "name" (else "regex"), or "drop".
	Name string
	// Paths are the selected subtrees (nil = the whole request).
	Paths   []Pointer
	re      *regexp.Regexp
	replace string
}

// Set is the ordered list of a project's key normalizers. A nil or empty
// Set changes nothing.
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

// ErrInvalid wraps every problem of a "normalize" value; the message starts
// with the JSON pointer of the entry in the config file.
var ErrInvalid = errors.New("invalid key normalizer")

func invalid(ptr, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, ptr, fmt.Sprintf(format, args...))
}

// namePattern is what a regex rule's "name" may look like: it is printed in
// reports and stored in key_normalizers.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Parse parses the value of the config's "normalize" member (decoded JSON).
// Errors wrap ErrInvalid and name the entry ("/normalize/2/pattern: …").
func Parse(v any) (*Set, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, invalid("/normalize", "must be an array of rules ({\"rule\": %s})", strings.ReplaceAll(RuleNames, ", ", " | "))
	}
	s := &Set{}
	for i, e := range list {
		r, err := parseRule(fmt.Sprintf("/normalize/%d", i), e)
		if err != nil {
			return nil, err
		}
		s.Rules = append(s.Rules, r)
	}
	return s, nil
}

func parseRule(ptr string, v any) (Rule, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Rule{}, invalid(ptr, "must be an object such as {\"rule\": \"uuid\"}")
	}
	kind, ok := m["rule"].(string)
	if !ok {
		return Rule{}, invalid(ptr+"/rule", "is required: one of %s", RuleNames)
	}
	allowed := map[string]bool{"rule": true, "paths": true}
	r := Rule{Kind: kind, Name: kind}
	switch {
	case builtins[kind] != "":
		r.re = regexp.MustCompile(builtins[kind])
		r.replace = "<" + kind + ">"
	case kind == KindRegex:
		allowed["pattern"], allowed["replace"], allowed["name"] = true, true, true
		pat, ok := m["pattern"].(string)
		if !ok || pat == "" {
			return Rule{}, invalid(ptr+"/pattern", "a regex rule needs a non-empty \"pattern\" (Go RE2 syntax)")
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return Rule{}, invalid(ptr+"/pattern", "bad regular expression %q: %v", pat, err)
		}
		rep, ok := m["replace"].(string)
		if !ok {
			return Rule{}, invalid(ptr+"/replace", "a regex rule needs a \"replace\" string (use ${1} for the first group; \"\" removes the match)")
		}
		r.re, r.replace = re, rep
		if n, present := m["name"]; present {
			name, _ := n.(string)
			if !namePattern.MatchString(name) {
				return Rule{}, invalid(ptr+"/name", "%q is not a rule name: use lowercase letters, digits, '.', '_' and '-' (at most 64)", name)
			}
			r.Name = name
		}
	case kind == KindDrop:
	default:
		return Rule{}, invalid(ptr+"/rule", "unknown rule %q (use one of %s)", kind, RuleNames)
	}
	for k := range m {
		if !allowed[k] {
			return Rule{}, invalid(ptr, "unknown field %q for rule %q (allowed: %s)", k, kind, strings.Join(sortedKeys(allowed), ", "))
		}
	}
	if pv, present := m["paths"]; present {
		arr, ok := pv.([]any)
		if !ok || len(arr) == 0 {
			return Rule{}, invalid(ptr+"/paths", "must be a non-empty array of JSON pointers such as \"/messages/*/content\"")
		}
		for j, p := range arr {
			ps, ok := p.(string)
			if !ok {
				return Rule{}, invalid(fmt.Sprintf("%s/paths/%d", ptr, j), "must be a JSON pointer string such as \"/user\"")
			}
			pp, err := ParsePointer(ps)
			if err != nil {
				return Rule{}, invalid(fmt.Sprintf("%s/paths/%d", ptr, j), "%v", err)
			}
			if kind == KindDrop && len(pp) == 0 {
				return Rule{}, invalid(fmt.Sprintf("%s/paths/%d", ptr, j), "drop cannot remove the whole request; name a member such as \"/user\"")
			}
			r.Paths = append(r.Paths, pp)
		}
	} else if kind == KindDrop {
		return Rule{}, invalid(ptr+"/paths", "a drop rule needs \"paths\", e.g. [\"/user\", \"/prompt_cache_key\"]")
	}
	return r, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Pointer is a parsed JSON pointer (RFC 6901): its reference tokens,
// unescaped. A token "*" matches any array index or object key.
type Pointer []string

// ParsePointer parses s: "" (the whole request) or "/"-separated tokens
// with ~0 and ~1 escapes.
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("bad JSON pointer %q: it must start with \"/\" (e.g. \"/messages/*/content\")", s)
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("bad JSON pointer %q: \"~\" must be written ~0 (and \"/\" inside a name ~1)", s)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return Pointer(toks), nil
}

// NormalizeKey applies the rules in order to a copy of request (the key
// request, after the built-in key-only rules) and returns it with the
// names of the rules that changed it, in config order without repeats
// (key_normalizers). request is never modified; with no rules it is
// returned as is.
func (s *Set) NormalizeKey(request map[string]any) (map[string]any, []string) {
	if s.Len() == 0 {
		return request, nil
	}
	out := provider.DeepCopy(request).(map[string]any)
	var applied []string
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.apply(out) && !slices.Contains(applied, r.Name) {
			applied = append(applied, r.Name)
		}
	}
	return out, applied
}

// apply runs one rule on doc in place and reports whether it changed it.
func (r *Rule) apply(doc map[string]any) bool {
	if r.Kind == KindDrop {
		return drop(doc, r.Paths)
	}
	if len(r.Paths) == 0 {
		_, changed := r.rewrite(doc)
		return changed
	}
	changed := false
	for _, loc := range selectRoots(locate(doc, r.Paths)) {
		if len(loc) == 0 {
			_, c := r.rewrite(doc)
			changed = changed || c
			continue
		}
		parent, last := resolve(doc, loc[:len(loc)-1]), loc[len(loc)-1]
		switch p := parent.(type) {
		case map[string]any:
			nv, c := r.rewrite(p[last.key])
			p[last.key] = nv
			changed = changed || c
		case []any:
			nv, c := r.rewrite(p[last.index])
			p[last.index] = nv
			changed = changed || c
		}
	}
	return changed
}

// rewrite replaces matches in every string inside v (in place for
// containers) and returns the new value and whether anything changed.
func (r *Rule) rewrite(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		n := r.re.ReplaceAllString(t, r.replace)
		return n, n != t
	case map[string]any:
		changed := false
		for k, e := range t {
			nv, c := r.rewrite(e)
			if c {
				t[k], changed = nv, true
			}
		}
		return t, changed
	case []any:
		changed := false
		for i, e := range t {
			nv, c := r.rewrite(e)
			if c {
				t[i], changed = nv, true
			}
		}
		return t, changed
	}
	return v, false
}

// step is one concrete reference token: an object key or an array index.
type step struct {
	key   string
	index int
	array bool
}

// locate expands pointers (with "*") to the concrete locations that exist
// in doc, deduplicated.
func locate(doc any, ptrs []Pointer) [][]step {
	var out [][]step
	seen := map[string]bool{}
	var walk func(v any, rest Pointer, at []step)
	walk = func(v any, rest Pointer, at []step) {
		if len(rest) == 0 {
			if k := locKey(at); !seen[k] {
				seen[k] = true
				out = append(out, slices.Clone(at))
			}
			return
		}
		tok := rest[0]
		switch t := v.(type) {
		case map[string]any:
			if tok == "*" {
				for k, e := range t {
					walk(e, rest[1:], append(at, step{key: k}))
				}
			} else if e, ok := t[tok]; ok {
				walk(e, rest[1:], append(at, step{key: tok}))
			}
		case []any:
			if tok == "*" {
				for i, e := range t {
					walk(e, rest[1:], append(at, step{index: i, array: true}))
				}
			} else if i, ok := arrayIndex(tok, len(t)); ok {
				walk(t[i], rest[1:], append(at, step{index: i, array: true}))
			}
		}
	}
	for _, p := range ptrs {
		walk(doc, p, nil)
	}
	return out
}

// arrayIndex parses an RFC 6901 array index ("0" or no leading zero) below n.
func arrayIndex(tok string, n int) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || i >= n {
		return 0, false
	}
	return i, true
}

func locKey(at []step) string {
	var b strings.Builder
	for _, s := range at {
		if s.array {
			fmt.Fprintf(&b, "/%d", s.index)
		} else {
			b.WriteString("/k" + strings.ReplaceAll(s.key, "/", "//"))
		}
	}
	return b.String()
}

// selectRoots keeps the locations no other location contains, so that a
// subtree selected twice (overlapping paths) is rewritten once.
func selectRoots(locs [][]step) [][]step {
	var out [][]step
	for i, l := range locs {
		inner := false
		for j, o := range locs {
			if i != j && len(o) < len(l) && slices.Equal(o, l[:len(o)]) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, l)
		}
	}
	return out
}

// resolve follows concrete steps from doc.
func resolve(doc any, at []step) any {
	v := doc
	for _, s := range at {
		switch t := v.(type) {
		case map[string]any:
			v = t[s.key]
		case []any:
			v = t[s.index]
		}
	}
	return v
}

// drop removes every selected location from doc, highest array index
// first, so that every path names an element of the original document.
func drop(doc map[string]any, ptrs []Pointer) bool {
	locs := locate(doc, ptrs)
	if len(locs) == 0 {
		return false
	}
	// Deepest and highest first: removing an element never shifts a
	// location still to be removed.
	slices.SortFunc(locs, func(a, b []step) int { return -compareLoc(a, b) })
	for _, loc := range locs {
		parentAt := loc[:len(loc)-1]
		last := loc[len(loc)-1]
		parent := resolve(doc, parentAt)
		switch p := parent.(type) {
		case map[string]any:
			delete(p, last.key)
		case []any:
			np := slices.Delete(p, last.index, last.index+1)
			setAt(doc, parentAt, np)
		}
	}
	return true
}

// compareLoc orders locations token by token (indexes numerically); a
// prefix sorts before what it contains.
func compareLoc(a, b []step) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x.array && y.array {
			if c := x.index - y.index; c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// setAt replaces the value at concrete location at (not the root).
func setAt(doc map[string]any, at []step, v any) {
	parent, last := resolve(doc, at[:len(at)-1]), at[len(at)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last.key] = v
	case []any:
		p[last.index] = v
	}
}
