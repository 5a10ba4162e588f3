package check

import (
	"github.com/traceforge/traceforge/internal/provider/registry"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/secret"
)

// The key rules live in internal/secret (render's redacting writer uses
// them too); check scans documents and quotes values with them.

// SecretPatterns lists the rule names and expressions (for docs and tests).
func SecretPatterns() map[string]string { return secret.Patterns() }

// SecretMatch is one key-shaped string found in a value.
type SecretMatch = secret.Match

// ScanSecrets walks every string (and object key) of v.
func ScanSecrets(v any, base string) []SecretMatch { return secret.Scan(v, base) }

// Redact replaces every key-shaped substring of s with [REDACTED:<rule>].
// Reports and logs are redacted by internal/render's writer
// (secret.RedactView); check uses Redact for the values it quotes in its
// own messages.
func Redact(s string) string { return secret.Redact(s) }

// RedactView is secret.RedactView: Redact matching on a view of s.
func RedactView(s string, view func(string) (string, []int)) string {
	return secret.RedactView(s, view)
}

// credentialHeaders carry a call's credentials. Their values (and every
// query parameter value) are scrubbed from upstream text traceforge shows.
// Everyone's (Authorization, Proxy-Authorization, Cookie, Azure's Api-Key,
// which any OpenAI-compatible gateway may take) and each provider's
// (Descriptor.CredentialHeaders).
var credentialHeaders = func() []string {
	out := []string{"Authorization", "Proxy-Authorization", "Cookie", "Api-Key"}
	for _, d := range registry.Providers() {
		out = append(out, d.CredentialHeaders...)
	}
	return out
}()

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
