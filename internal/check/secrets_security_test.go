package check

import (
	"net/http"
	"strings"
	"testing"
)

// The credentials a call carries are scrubbed from upstream text, whatever
// their shape; short values and other text are kept.
func TestRedactCredentialValues(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer SYNTHTOKEN123")
	h.Set("api-key", "SYNTHAZURE0123")
	h.Set("OpenAI-Organization", "org-SYNTHORG")
	h.Set("Cookie", "a=1; session=SYNTHCOOKIE99")
	h.Set("x-api-key", "sk-ant-api03-"+strings.Repeat("Q", 93)+"AA")
	h.Set("x-goog-api-key", "SYNTHGOOGLE42")
	h.Set("Content-Type", "application/json")
	vals := CredentialValues(h, "api-key=SYNTHQUERY7&x=ab")
	text := "refused SYNTHTOKEN123, SYNTHAZURE0123, org-SYNTHORG, SYNTHCOOKIE99, SYNTHQUERY7, SYNTHGOOGLE42 and " +
		h.Get("x-api-key") + " for application/json x=ab"
	got := RedactValues(text, vals)
	for _, s := range []string{"SYNTH", "sk-ant-api03"} {
		if strings.Contains(got, s) {
			t.Errorf("%q survived: %s", s, got)
		}
	}
	if !strings.Contains(got, "application/json x=ab") || !strings.Contains(got, "refused [REDACTED]") {
		t.Errorf("ordinary text changed: %s", got)
	}
}
