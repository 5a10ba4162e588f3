package provider_test

import (
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

func TestInjectUsage(t *testing.T) {
	var inj provider.OpenAIIncludeUsage
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		// Without stream_options every byte the application sent is kept.
		{`{"model":"m", "stream":true}`, `{"stream_options":{"include_usage":true},"model":"m", "stream":true}`, true},
		{`  { }`, `  {"stream_options":{"include_usage":true} }`, true},
		// An existing object is merged (the body is re-encoded).
		{`{"stream_options":{"x":1},"a":"<"}`, `{"a":"<","stream_options":{"include_usage":true,"x":1}}`, true},
		{`{"stream_options":null}`, `{"stream_options":{"include_usage":true}}`, true},
		// Malformed: left to the upstream.
		{`{"stream_options":"yes"}`, ``, false},
		{`[1]`, ``, false},
		{`{`, ``, false},
	} {
		got, ok := inj.InjectUsage([]byte(c.in))
		if ok != c.ok || string(got) != c.want {
			t.Errorf("InjectUsage(%s) = %s %v, want %s %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestOpenAINormalizeStored(t *testing.T) {
	r := map[string]any{"stop": "x", "seed": nil, "temperature": nil}
	provider.OpenAINormalizeStored(r)
	if s, _ := r["stop"].([]any); len(s) != 1 || s[0] != "x" {
		t.Errorf("stop = %#v", r["stop"])
	}
	if _, ok := r["seed"]; ok {
		t.Error("null seed must be dropped")
	}
	if _, ok := r["temperature"]; !ok {
		t.Error("temperature is required, not optional: its null is kept for validation to report")
	}
}

func TestIsStream(t *testing.T) {
	f := format(provider.OpenAI, provider.ChatCompletions)
	for ct, want := range map[string]bool{
		"text/event-stream":                true,
		"Text/Event-Stream; charset=utf-8": true,
		"text/event-stream;charset=UTF-8":  true,
		"application/json":                 false,
		"application/x-ndjson":             false,
		"":                                 false,
	} {
		if got := provider.IsStream(f, ct); got != want {
			t.Errorf("IsStream(%q) = %v", ct, got)
		}
	}
}
