package serve

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
		"TRACEFORGE_URL=http://127.0.0.1:9",
	}
	if got := Env("127.0.0.1:9"); !reflect.DeepEqual(got, want) {
		t.Errorf("Env = %q\nwant %q", got, want)
	}
	ex := Exports("127.0.0.1:9")
	for i := range want {
		if ex[i] != "export "+want[i] {
			t.Errorf("Exports[%d] = %q, want export %s", i, ex[i], want[i])
		}
	}
}

// TestOllamaHostURL: OLLAMA_HOST is read the way Ollama's own client reads
// it (envconfig.Host): host:port without a scheme is common.
func TestOllamaHostURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"127.0.0.1:11500":          "http://127.0.0.1:11500",
		"gpu-box":                  "http://gpu-box:11434",
		":11500":                   "http://127.0.0.1:11500",
		"0.0.0.0":                  "http://0.0.0.0:11434",
		"http://ollama.internal":   "http://ollama.internal:80",
		"https://ollama.example/x": "https://ollama.example:443/x",
		"http://127.0.0.1:9":       "http://127.0.0.1:9",
		"[::1]:11500":              "http://[::1]:11500",
		"  http://10.0.0.2:1234  ": "http://10.0.0.2:1234",
		"host:notaport":            "http://host:11434", // Ollama drops a bad port too
	} {
		if got := OllamaHostURL(in); got != want {
			t.Errorf("OllamaHostURL(%q) = %q, want %q", in, got, want)
		}
	}
}
