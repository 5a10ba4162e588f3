package registry

import (
	"reflect"
	"testing"
)

// TestEnvAndExports: COMMAND gets every SDK's base-URL variable (DESIGN §6,
// §12.2), and server mode prints the same as exports, in that order.
func TestEnvAndExports(t *testing.T) {
	want := []string{
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:9",
		"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9",
		"OLLAMA_HOST=http://127.0.0.1:9",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:9",
		"GOOGLE_VERTEX_BASE_URL=http://127.0.0.1:9",
		"ANTHROPIC_VERTEX_BASE_URL=http://127.0.0.1:9/v1",
		"AZURE_OPENAI_ENDPOINT=http://127.0.0.1:9",
		"TRACEFORGE_URL=http://127.0.0.1:9",
	}
	if got := CommandEnv("127.0.0.1:9"); !reflect.DeepEqual(got, want) {
		t.Errorf("Env = %q\nwant %q", got, want)
	}
	ex := Exports("127.0.0.1:9")
	for i := range want {
		if ex[i] != "export "+want[i] {
			t.Errorf("Exports[%d] = %q, want export %s", i, ex[i], want[i])
		}
	}
}
