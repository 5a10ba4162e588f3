package registry_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/azure"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

func TestRoute(t *testing.T) {
	cases := []struct {
		method, path string
		p            provider.Name
		e            provider.Endpoint
		ok           bool
	}{
		{"POST", "/v1/chat/completions", provider.OpenAI, provider.ChatCompletions, true},
		{"POST", "/prefix/v1/chat/completions", provider.OpenAI, provider.ChatCompletions, true},
		{"POST", "/chat/completions", provider.OpenAI, provider.ChatCompletions, true},
		{"POST", "/v1/chat/completions?api-version=2024-10-21", provider.OpenAI, provider.ChatCompletions, true},
		{"POST", "/v1/completions", provider.OpenAI, provider.Completions, true},
		{"POST", "/openai/completions", provider.OpenAI, provider.Completions, true},
		{"POST", "/v1/messages", provider.Anthropic, provider.Messages, true},
		{"POST", "/gateway/anthropic/v1/messages", provider.Anthropic, provider.Messages, true},
		{"GET", "/v1/chat/completions", "", "", false},
		{"post", "/v1/chat/completions", "", "", false},
		{"POST", "/v1/embeddings", provider.OpenAI, "/v1/embeddings", true},
		{"POST", "/v1/moderations", "", "", false},
		{"POST", "/v1/responses", provider.OpenAI, "/v1/responses", true},
		{"POST", "/openai/v1/responses", azure.Name, "/openai/v1/responses", true}, // Azure OpenAI's route wins (RoutesFirst)
		{"GET", "/v1/responses/resp_1", "", "", false},
		{"DELETE", "/v1/responses/resp_1", "", "", false},
		{"POST", "/v1/responses/resp_1/cancel", "", "", false},
		{"GET", "/v1/responses/resp_1/input_items", "", "", false},
		{"POST", "/v1/messages/count_tokens", "", "", false},
		{"POST", "/v1/messages/batches", "", "", false},
		{"POST", "/v1/threads/thread_1/messages", "", "", false},
		{"POST", "/v1/chat/completions/chatcmpl-1", "", "", false},
		{"POST", "/v1/chat/completions/", "", "", false},
		{"POST", "", "", "", false},
	}
	for _, c := range cases {
		f, e, ok := registry.Route(c.method, c.path)
		var p provider.Name
		if f != nil {
			p = f.Provider()
			if f.Endpoint() != e {
				t.Errorf("Route(%q, %q): format endpoint %q, route endpoint %q", c.method, c.path, f.Endpoint(), e)
			}
		}
		if p != c.p || e != c.e || ok != c.ok {
			t.Errorf("Route(%q, %q) = %q, %q, %v; want %q, %q, %v", c.method, c.path, p, e, ok, c.p, c.e, c.ok)
		}
	}
}

// TestForRecord: the format of a stored format-1.0.0 request is derived
// from its body (DESIGN §11 "Keys and lookups"); an OpenAI request with
// neither messages nor prompt (invalid anyway) keys as chat.
func TestForRecord(t *testing.T) {
	cases := []struct {
		p   string
		req string
		e   provider.Endpoint
	}{
		{"openai", `{"model":"m","messages":[]}`, provider.ChatCompletions},
		{"openai", `{"model":"m","prompt":"x"}`, provider.Completions},
		{"openai", `{"model":"m","messages":[],"prompt":"x"}`, provider.ChatCompletions},
		{"openai", `{"model":"m"}`, provider.ChatCompletions},
		{"anthropic", `{"model":"m","messages":[]}`, provider.Messages},
		{"anthropic", `{}`, provider.Messages},
		{"mistral", `{"messages":[]}`, ""},
	}
	for _, c := range cases {
		req := mustDecode(t, c.req)
		var got provider.Endpoint
		if f := registry.ForRecord(c.p, req); f != nil {
			got = f.Endpoint()
		}
		if got != c.e {
			t.Errorf("ForRecord(%q, %s) = %q, want %q", c.p, c.req, got, c.e)
		}
	}
}

func TestErrorBody(t *testing.T) {
	o := registry.ForProvider(provider.OpenAI).ErrorBody("invalid_request_error", "snapshot_not_found", `no snapshot for <request>`)
	if string(o) != `{"error":{"message":"no snapshot for <request>","type":"invalid_request_error","param":null,"code":"snapshot_not_found"}}` {
		t.Fatalf("openai: %s", o)
	}
	if o := registry.ForProvider(provider.OpenAI).ErrorBody("t", "", "m"); !bytes.Contains(o, []byte(`"code":null`)) {
		t.Fatalf("openai empty code: %s", o)
	}
	a := registry.ForProvider(provider.Anthropic).ErrorBody("not_found_error", "ignored", "no snapshot")
	if string(a) != `{"type":"error","error":{"type":"not_found_error","message":"no snapshot"}}` {
		t.Fatalf("anthropic: %s", a)
	}
}

func FuzzRoute(f *testing.F) {
	for _, s := range []string{"/v1/chat/completions", "/p/v1/completions?x=1", "/v1/messages", "/v1/embeddings", "", "/", "?/v1/messages", "/v1/messages#/chat/completions"} {
		f.Add("POST", s)
	}
	f.Add("GET", "/v1/messages")
	f.Fuzz(func(t *testing.T, method, path string) {
		f, e, ok := registry.Route(method, path)
		if !ok {
			if f != nil || e != "" {
				t.Fatalf("not ok but %v %q", f, e)
			}
			return
		}
		if method != "POST" || registry.Lookup(f.Provider(), e) != f {
			t.Fatalf("Route(%q, %q) = %v %q", method, path, f, e)
		}
		clean := path
		if i := strings.IndexAny(clean, "?#"); i >= 0 {
			clean = clean[:i]
		}
		suffix := map[provider.Endpoint]string{provider.ChatCompletions: "/chat/completions", provider.Completions: "/completions", provider.Messages: "/v1/messages"}[e]
		if !strings.HasSuffix(clean, suffix) {
			t.Fatalf("%q routed as %q", path, e)
		}
		if e == provider.Completions && strings.HasSuffix(clean, "/chat/completions") {
			t.Fatalf("%q: chat path routed as completions", path)
		}
	})
}
