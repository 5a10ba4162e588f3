// Package secret holds the key rules: the patterns of API keys and bearer
// tokens that traceforge never lets reach a snapshot file, a report or a
// log. check scans snapshot documents with them (Scan) and render's one
// redacting writer replaces what they match (RedactView). It is a leaf:
// it knows no command, no result and no wire format.
package secret

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// rule is one key pattern: Prefix is a literal every match contains (the
// quick pre-filter), "" for the bearer rule, which the pre-filter finds
// by its word.
type rule struct {
	Name   string
	Prefix string
	Re     *regexp.Regexp
}

// rules are the providers' key rules (Register, from each provider's
// descriptor: gitleaks' openai-api-key, anthropic-api-key,
// anthropic-admin-api-key, gcp-api-key …) followed by the bearer rule,
// which catches tokens pasted with their scheme.
var rules = []rule{bearerRule}

var bearerRule = rule{"bearer-token", "", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}`)}

// prefixes are the distinct Prefix values of rules, for quick.
var prefixes []string

// Register adds a key rule named name (the rule findings name) matching
// pattern; every match contains prefix. It is meant for package
// initialisation (the provider registry registers each descriptor's
// rules), before any text is scanned; a pattern that does not compile
// panics, as regexp.MustCompile does.
func Register(name, prefix, pattern string) {
	for _, r := range rules {
		if r.Name == name {
			return
		}
	}
	rules = append(rules[:len(rules)-1:len(rules)-1], rule{name, prefix, regexp.MustCompile(pattern)}, bearerRule)
	for _, p := range prefixes {
		if p == prefix {
			return
		}
	}
	prefixes = append(prefixes, prefix)
}

// Patterns lists the rule names and expressions (for docs and tests).
func Patterns() map[string]string {
	m := map[string]string{}
	for _, r := range rules {
		m[r.Name] = r.Re.String()
	}
	return m
}

// Match is one key-shaped string found in a value.
type Match struct {
	Pointer string
	Rule    string
	SHA256  string // of the matched text, for an allow entry
}

// quick rejects strings that cannot match any rule.
func quick(s string) bool {
	for _, p := range prefixes {
		if strings.Contains(s, p) {
			return true
		}
	}
	return containsFoldBearer(s)
}

// containsFoldBearer reports whether s contains "bearer" in any ASCII case,
// without allocating (every string of every snapshot passes here). It
// jumps from one 'b' or 'B' to the next with strings.IndexByte.
func containsFoldBearer(s string) bool {
	const word = "bearer"
	nextLo, nextUp := -1, -1 // next 'b' and 'B' at or after i (-1: not searched)
	for i := 0; i+len(word) <= len(s); {
		if nextLo < i {
			nextLo = indexByteFrom(s, i, 'b')
		}
		if nextUp < i {
			nextUp = indexByteFrom(s, i, 'B')
		}
		i = min(nextLo, nextUp)
		if i+len(word) > len(s) {
			return false
		}
		j := 1
		for ; j < len(word) && s[i+j]|0x20 == word[j]; j++ {
		}
		if j == len(word) {
			return true
		}
		i++
	}
	return false
}

// indexByteFrom is the index of the first c in s at or after i, len(s) if
// there is none.
func indexByteFrom(s string, i int, c byte) int {
	if k := strings.IndexByte(s[i:], c); k >= 0 {
		return i + k
	}
	return len(s)
}

// anyQuick reports whether any string or object key of v passes quick:
// most documents hold none, and then the walk that builds a JSON pointer
// for every value (and sorts every object's keys) is not needed.
func anyQuick(v any) bool {
	switch x := v.(type) {
	case string:
		return quick(x)
	case []any:
		for _, e := range x {
			if anyQuick(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if quick(k) || anyQuick(e) {
				return true
			}
		}
	}
	return false
}

// Scan walks every string (and object key) of v, a decoded JSON value;
// base is the JSON pointer of v.
func Scan(v any, base string) []Match {
	if !anyQuick(v) {
		return nil
	}
	var out []Match
	var walk func(v any, ptr string)
	scan := func(s, ptr string) {
		if !quick(s) {
			return
		}
		for _, r := range rules {
			for _, m := range r.Re.FindAllString(s, -1) {
				sum := sha256.Sum256([]byte(m))
				out = append(out, Match{Pointer: ptr, Rule: r.Name, SHA256: hex.EncodeToString(sum[:])})
			}
		}
	}
	walk = func(v any, ptr string) {
		switch x := v.(type) {
		case string:
			scan(x, ptr)
		case []any:
			for i, e := range x {
				walk(e, ptr+"/"+strconv.Itoa(i))
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := ptr + "/" + snapshot.EscapePointer(k)
				scan(k, p)
				walk(x[k], p)
			}
		}
	}
	walk(v, base)
	return out
}

// Redact replaces every key-shaped substring of s with [REDACTED:<rule>].
func Redact(s string) string { return RedactView(s, nil) }

// RedactView is Redact matching on a view of s: view returns the text to
// match (e.g. s with a format's escapes decoded, so a key after a JSON "\n"
// still starts at a word boundary) and, for each byte of it plus one past
// the end, the offset in s it comes from. A nil view matches s itself.
// Rules apply one after another, as in Redact.
func RedactView(s string, view func(string) (string, []int)) string {
	// A view only decodes escapes; none of them spells "sk-", "AIza" or
	// "bearer" except \uXXXX, so text without those needs no matching at all.
	if !quick(s) && (view == nil || !strings.Contains(s, `\u`)) {
		return s
	}
	for _, r := range rules {
		if view == nil {
			s = r.Re.ReplaceAllString(s, "[REDACTED:"+r.Name+"]")
			continue
		}
		v, at := view(s)
		if !quick(v) {
			return s
		}
		locs := r.Re.FindAllStringIndex(v, -1)
		if len(locs) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, l := range locs {
			b.WriteString(s[last:at[l[0]]])
			b.WriteString("[REDACTED:" + r.Name + "]")
			last = at[l[1]]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}
