package cli

import (
	"errors"
	"testing"
)

// TestResolveUpstreams: per provider, the flag, else TRACEFORGE_<P>_UPSTREAM,
// else the SDK's own variable (OLLAMA_HOST as host:port), else the default.
func TestResolveUpstreams(t *testing.T) {
	env := map[string]string{}
	io := &IOStreams{Getenv: func(k string) string { return env[k] }}
	u, err := resolveUpstreams(io, upstreamFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if u.Gemini.String() != "https://generativelanguage.googleapis.com" || u.Ollama.String() != "http://127.0.0.1:11434" {
		t.Errorf("defaults: %s %s", u.Gemini, u.Ollama)
	}
	env["GOOGLE_GEMINI_BASE_URL"] = "https://gateway.example/google/"
	env["OLLAMA_HOST"] = "10.0.0.5:11500"
	if u, err = resolveUpstreams(io, upstreamFlags{}); err != nil || u.Gemini.String() != "https://gateway.example/google" || u.Ollama.String() != "http://10.0.0.5:11500" {
		t.Errorf("from the SDK variables: %v %v %v", u.Gemini, u.Ollama, err)
	}
	env["TRACEFORGE_OLLAMA_UPSTREAM"] = "http://ollama.internal:8080"
	if u, _ = resolveUpstreams(io, upstreamFlags{Gemini: "http://127.0.0.1:9"}); u.Gemini.String() != "http://127.0.0.1:9" || u.Ollama.String() != "http://ollama.internal:8080" {
		t.Errorf("flag and TRACEFORGE_ variable win: %s %s", u.Gemini, u.Ollama)
	}
	_, err = resolveUpstreams(io, upstreamFlags{Gemini: "ftp://x"})
	var ee *ExitError
	if err == nil || !errors.As(err, &ee) || ee.Code != ExitUsage {
		t.Errorf("a bad --gemini-upstream: %v, want a usage error", err)
	}
}
