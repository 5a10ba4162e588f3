package check

import (
	"strings"
	"testing"
)

// TestScanSecretsSkipsDocumentsWithoutCandidates: a document with a
// key-shaped string anywhere (value, key, deep in an array) is still
// walked and reported with its pointer; one without has no matches.
func TestScanSecretsSkipsDocumentsWithoutCandidates(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("a", 93) + "AA"
	for _, tc := range []struct {
		doc  any
		want string
	}{
		{map[string]any{"a": []any{"x", map[string]any{"b": "Bearer " + strings.Repeat("t", 24)}}}, "/a/1/b"},
		{map[string]any{"z": "plain", "a/b": []any{[]any{key}}}, "/a~1b/0/0"},
		{map[string]any{key: "v"}, "/" + key},
		{map[string]any{"a": []any{"plain", "text"}, "b": map[string]any{"c": "no keys here"}}, ""},
	} {
		ms := ScanSecrets(tc.doc, "")
		got := ""
		if len(ms) > 0 {
			got = ms[0].Pointer
		}
		if got != tc.want || len(ms) > 1 {
			t.Errorf("ScanSecrets(%v) = %v, want one match at %q", tc.doc, ms, tc.want)
		}
	}
}
