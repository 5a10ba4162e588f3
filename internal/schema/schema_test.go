package schema

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := snapshot.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const validOpenAI = `{"version":"1.1.0","hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000","snapshots":[{
 "id":"abc123def456","timestamp":"2026-01-09T10:30:00Z",
 "source":{"file":"src/a.py","line":12,"function":"f"},
 "endpoint":"/v1/chat/completions",
 "request":{"model":"gpt-4-turbo","messages":[{"role":"user","content":"Hello"}],"temperature":0.0,"max_tokens":100,"seed":42},
 "response":{"content":"Hi","tokens_used":10,"latency_ms":450,"finish_reason":"stop"},
 "hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}`

func TestValidFileHasNoViolations(t *testing.T) {
	if v := ValidateFile(decode(t, validOpenAI), "#/$defs/chatRecord"); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

// recordDefs are the record definitions the cases name by a short word.
var recordDefs = map[string]string{
	"openai":      "#/$defs/chatRecord",
	"completions": "#/$defs/completionsRecord",
	"anthropic":   "#/$defs/messagesRecord",
	"generic":     GenericRecord,
}

func TestViolationsArePlainWords(t *testing.T) {
	cases := []struct {
		name, from, to, provider string
		want                     []string
	}{
		{"missing temperature", `"temperature":0.0,`, ``, "openai", []string{`/snapshots/0/request/temperature: required field "temperature" is missing`}},
		{"string temperature", `"temperature":0.0`, `"temperature":"0.7"`, "openai", []string{"/snapshots/0/request/temperature: must be a number, not a string"}},
		{"messages string", `"messages":[{"role":"user","content":"Hello"}]`, `"messages":"..."`, "openai", []string{"/snapshots/0/request/messages: must be an array, not a string"}},
		{"both max tokens", `"max_tokens":100`, `"max_tokens":100,"max_completion_tokens":100`, "openai", []string{"/snapshots/0/request/max_tokens: max_tokens and max_completion_tokens are both set; send only one"}},
		{"max_completion_tokens alone is fine", `"max_tokens":100`, `"max_completion_tokens":100`, "openai", nil},
		{"n=2", `"seed":42`, `"seed":42,"n":2`, "openai", []string{"/snapshots/0/request/n: must be 1: a snapshot holds exactly one completion"}},
		{"completions without max_tokens", `"messages":[{"role":"user","content":"Hello"}],"temperature":0.0,"max_tokens":100`, `"prompt":"Hi","temperature":0.0`, "completions", []string{`/snapshots/0/request/max_tokens: required field "max_tokens" is missing`}},
		{"unknown response field", `"finish_reason":"stop"`, `"finish_reason":"stop","extra":1`, "openai", []string{`/snapshots/0/response/extra: unknown field "extra" is not allowed here`}},
		{"bad id", `"abc123def456"`, `"ABC"`, "openai", []string{"/snapshots/0/id: must be 12 lowercase hex characters"}},
		{"anthropic needs max_tokens and a string role", `"role":"user"`, `"role":7`, "anthropic", []string{"/snapshots/0/request/messages/0/role: must be a string"}},
		{"endpoint is required", `"endpoint":"/v1/chat/completions",`, ``, "openai", []string{`/snapshots/0/endpoint: required field "endpoint" is missing`}},
		{"endpoint of another format", `"endpoint":"/v1/chat/completions"`, `"endpoint":"/v1/completions"`, "openai", []string{`/snapshots/0/endpoint: has the wrong shape`, `/v1/chat/completions$`}},
		{"generic record still checks the envelope", `"line":12`, `"line":0`, "generic", []string{"/snapshots/0/source/line"}},
		{"stream false is not stored", `"finish_reason":"stop"`, `"finish_reason":"stop","stream":false`, "openai", []string{"/snapshots/0/response/stream: must be true"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(validOpenAI, tc.from, tc.to, 1)
			got := ValidateFile(decode(t, doc), recordDefs[tc.provider])
			var lines []string
			for _, v := range got {
				lines = append(lines, v.String())
			}
			joined := strings.Join(lines, "\n")
			if tc.want == nil && tc.provider == "openai" && len(got) != 0 {
				t.Fatalf("unexpected violations:\n%s", joined)
			}
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Errorf("want %q in\n%s", w, joined)
				}
			}
		})
	}
}

func TestManifestSchema(t *testing.T) {
	m := `{"version":"1.1.0","created_at":"2026-01-09T10:00:00Z","updated_at":"2026-01-09T10:00:00Z","snapshots":[{"id":"abc123def456","provider":"openai","file":"../x","hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}],"hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}`
	got := ValidateManifest(decode(t, m))
	if len(got) != 1 || got[0].Pointer != "/snapshots/0/file" || !strings.Contains(got[0].Reason, "<provider>/<id>.json") {
		t.Fatalf("got %v", got)
	}
}

func TestWarmCompilesAheadOfUse(t *testing.T) {
	if err := Warm("#/$defs/chatRecord", "#/$defs/messagesRecord"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"snapshot-file.schema.json#/$defs/file", "manifest.schema.json",
		"snapshot-file.schema.json#/$defs/chatRecord", "snapshot-file.schema.json#/$defs/messagesRecord"} {
		if _, ok := compiled.Load(ref); !ok {
			t.Errorf("%s not compiled by Warm", ref)
		}
	}
	err := Warm("#/$defs/noSuchRecord")
	if err == nil || !strings.Contains(err.Error(), "noSuchRecord") {
		t.Errorf("Warm of a missing definition: %v", err)
	}
	// A failed compilation leaves the shared compiler usable.
	if !Has("#/$defs/responsesRecord") || Has("#/$defs/noSuchRecord") {
		t.Error("Has after a failed compilation")
	}
}
