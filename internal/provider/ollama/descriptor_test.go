package ollama

import "testing"

// TestHostURL: OLLAMA_HOST is read the way Ollama's own client reads
// it (envconfig.Host): host:port without a scheme is common.
func TestHostURL(t *testing.T) {
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
		if got := HostURL(in); got != want {
			t.Errorf("HostURL(%q) = %q, want %q", in, got, want)
		}
	}
}
