package check

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// secretRule is one key pattern. The OpenAI, Anthropic and Google rules are
// gitleaks' (openai-api-key, anthropic-api-key, anthropic-admin-api-key,
// gcp-api-key: the Gemini API's keys); the bearer rule catches tokens
// pasted with their scheme.
type secretRule struct {
	Name string
	Re   *regexp.Regexp
}

var secretRules = []secretRule{
	{"openai-api-key", regexp.MustCompile(`\b(?:sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})`)},
	{"anthropic-api-key", regexp.MustCompile(`\bsk-ant-api03-[a-zA-Z0-9_\-]{93}AA`)},
	{"anthropic-admin-api-key", regexp.MustCompile(`\bsk-ant-admin01-[a-zA-Z0-9_\-]{93}AA`)},
	{"gcp-api-key", regexp.MustCompile(`\bAIza[\w-]{35}`)},
	{"bearer-token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}`)},
}

// SecretPatterns lists the rule names and expressions (for docs and tests).
func SecretPatterns() map[string]string {
	m := map[string]string{}
	for _, r := range secretRules {
		m[r.Name] = r.Re.String()
	}
	return m
}

// SecretMatch is one key-shaped string found in a value.
type SecretMatch struct {
	Pointer string
	Rule    string
	SHA256  string // of the matched text, for an allow entry
}

// quick rejects strings that cannot match any rule.
func quick(s string) bool {
	return strings.Contains(s, "sk-") || strings.Contains(s, "AIza") || containsFoldBearer(s)
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

// ScanSecrets walks every string (and object key) of v.
func ScanSecrets(v any, base string) []SecretMatch {
	if !anyQuick(v) {
		return nil
	}
	var out []SecretMatch
	var walk func(v any, ptr string)
	scan := func(s, ptr string) {
		if !quick(s) {
			return
		}
		for _, r := range secretRules {
			for _, m := range r.Re.FindAllString(s, -1) {
				sum := sha256.Sum256([]byte(m))
				out = append(out, SecretMatch{Pointer: ptr, Rule: r.Name, SHA256: hex.EncodeToString(sum[:])})
			}
		}
	}
	walk = func(v any, ptr string) {
		switch x := v.(type) {
		case string:
			scan(x, ptr)
		case []any:
			for i, e := range x {
				walk(e, ptr+"/"+itoa(i))
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
// Reports and logs are redacted by internal/render's writer (RedactView);
// check uses Redact for the values it quotes in its own messages.
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
	for _, r := range secretRules {
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

// credentialHeaders carry a call's credentials. Their values (and every
// query parameter value) are scrubbed from upstream text traceforge shows.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key",
	"X-Goog-Api-Key", "Cookie", "OpenAI-Organization", "OpenAI-Project"}

// CredentialValues returns the credential values a request carries: the
// values of the credential headers (and an Authorization token without its
// scheme) and every query parameter value, for RedactValues.
func CredentialValues(h http.Header, rawQuery string) []string {
	var out []string
	for _, name := range credentialHeaders {
		for _, v := range h.Values(name) {
			out = append(out, v)
			if _, tok, ok := strings.Cut(v, " "); ok {
				out = append(out, strings.TrimSpace(tok))
			}
			if name == "Cookie" {
				for _, c := range strings.Split(v, ";") {
					if _, cv, ok := strings.Cut(c, "="); ok {
						out = append(out, strings.TrimSpace(cv))
					}
				}
			}
		}
	}
	if q, err := url.ParseQuery(rawQuery); err == nil {
		for _, vs := range q {
			out = append(out, vs...)
		}
	}
	return out
}

// RedactValues replaces each of values (at least 6 bytes long: shorter ones
// are too likely to be ordinary words) found in s with [REDACTED], longest
// first, then applies Redact. An upstream's error text goes through it with
// the call's CredentialValues: a gateway may quote the key it refused.
func RedactValues(s string, values []string) string {
	vs := append([]string(nil), values...)
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	for _, v := range vs {
		if len(v) >= 6 {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	return Redact(s)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
