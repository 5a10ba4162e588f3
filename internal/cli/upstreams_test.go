package cli

import (
	"errors"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// flag is one --<provider>-upstream flag given as v.
func flag(p provider.Name, v string) map[provider.Name]*string {
	return map[provider.Name]*string{p: &v}
}

// TestResolveUpstreams: per provider, the flag, else TRACEFORGE_<P>_UPSTREAM,
// else the SDK's own variable (OLLAMA_HOST as host:port), else the default.
func TestResolveUpstreams(t *testing.T) {
	env := map[string]string{}
	io := &IOStreams{Getenv: func(k string) string { return env[k] }}
	u, err := resolveUpstreams(io, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u[provider.Gemini].String() != "https://generativelanguage.googleapis.com" || u[provider.Ollama].String() != "http://127.0.0.1:11434" {
		t.Errorf("defaults: %s %s", u[provider.Gemini], u[provider.Ollama])
	}
	env["GOOGLE_GEMINI_BASE_URL"] = "https://gateway.example/google/"
	env["OLLAMA_HOST"] = "10.0.0.5:11500"
	if u, err = resolveUpstreams(io, nil); err != nil || u[provider.Gemini].String() != "https://gateway.example/google" || u[provider.Ollama].String() != "http://10.0.0.5:11500" {
		t.Errorf("from the SDK variables: %v %v %v", u[provider.Gemini], u[provider.Ollama], err)
	}
	env["TRACEFORGE_OLLAMA_UPSTREAM"] = "http://ollama.internal:8080"
	if u, _ = resolveUpstreams(io, flag(provider.Gemini, "http://127.0.0.1:9")); u[provider.Gemini].String() != "http://127.0.0.1:9" || u[provider.Ollama].String() != "http://ollama.internal:8080" {
		t.Errorf("flag and TRACEFORGE_ variable win: %s %s", u[provider.Gemini], u[provider.Ollama])
	}
	_, err = resolveUpstreams(io, flag(provider.Gemini, "ftp://x"))
	var ee *ExitError
	if err == nil || !errors.As(err, &ee) || ee.Code != ExitUsage {
		t.Errorf("a bad --gemini-upstream: %v, want a usage error", err)
	}
}
