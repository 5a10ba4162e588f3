package azure

import (
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

func TestParsePath(t *testing.T) {
	cases := []struct {
		path string
		want Path
		ok   bool
	}{
		{"/openai/deployments/gpt-4o/chat/completions", Path{Deployment: "gpt-4o", Op: opChat}, true},
		{"/prefix/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", Path{Deployment: "gpt-4o", Op: opChat, APIVersion: "2024-10-21"}, true},
		{"/openai/deployments/d/completions?api-version=2024-10-21", Path{Deployment: "d", Op: opCompletions, APIVersion: "2024-10-21"}, true},
		{"/openai/deployments/e/embeddings", Path{Deployment: "e", Op: opEmbeddings}, true},
		{"/openai/v1/chat/completions", Path{Op: opChat}, true},
		{"/openai/v1/responses?api-version=preview", Path{Op: opResponses, APIVersion: "preview"}, true},
		{"/openai/v1/embeddings", Path{Op: opEmbeddings}, true},
		// not Azure's LLM routes
		{"/openai/v1/completions", Path{}, false},
		{"/openai/deployments/d/responses", Path{}, false},
		{"/openai/deployments//chat/completions", Path{}, false},
		{"/openai/deployments/d/audio/speech", Path{}, false},
		{"/v1/chat/completions", Path{}, false},
		{"/openai/deployments/d/chat/completions?api-version=", Path{}, false},
		{"/openai/deployments/d/chat/completions?other=1", Path{}, false},
	}
	for _, c := range cases {
		got, ok := ParsePath(c.path)
		if ok != c.ok || got != c.want {
			t.Errorf("ParsePath(%s) = %+v %v, want %+v %v", c.path, got, ok, c.want, c.ok)
		}
		if ok {
			// The key endpoint parses back to the same call.
			again, ok := ParsePath(string(got.Endpoint()))
			if !ok || again != got {
				t.Errorf("%s: endpoint %s parses as %+v %v", c.path, got.Endpoint(), again, ok)
			}
		}
	}
}

func TestRoutesAndOwners(t *testing.T) {
	formats := Descriptor.Formats
	for path, want := range map[string]provider.Format{
		"/openai/deployments/d/chat/completions?api-version=1": NewChat(),
		"/openai/v1/chat/completions":                          NewChat(),
		"/openai/deployments/d/completions":                    NewCompletions(),
		"/openai/deployments/d/embeddings":                     Embeddings{},
		"/openai/v1/embeddings":                                Embeddings{},
		"/openai/v1/responses":                                 Responses{},
	} {
		var got []provider.Format
		for _, f := range formats {
			if _, ok := f.Route("POST", path); ok {
				got = append(got, f)
			}
			if _, ok := f.Route("GET", path); ok {
				t.Errorf("GET %s routed", path)
			}
		}
		if len(got) != 1 || reflect.TypeOf(got[0]) != reflect.TypeOf(want) {
			t.Errorf("%s: routed by %v, want %T", path, got, want)
		}
	}
	for _, f := range formats {
		if f.Provider() != Name {
			t.Errorf("%T: provider %s", f, f.Provider())
		}
		qk, ok := f.(provider.QueryKeyed)
		if !ok || !reflect.DeepEqual(qk.KeyQuery(), []string{APIVersion}) {
			t.Errorf("%T: api-version does not join the key", f)
		}
	}
}

// TestBindDeployment: a body without a model stores the deployment; a
// body's own model is kept.
func TestBindDeployment(t *testing.T) {
	r := map[string]any{"messages": []any{}}
	if err := NewChat().BindPath("/openai/deployments/gpt-4o/chat/completions", r); err != nil || r["model"] != "gpt-4o" {
		t.Fatalf("bind: %v %v", err, r)
	}
	r = map[string]any{"model": "gpt-4o-mini"}
	if err := NewChat().BindPath("/openai/deployments/gpt-4o/chat/completions", r); err != nil || r["model"] != "gpt-4o-mini" {
		t.Fatalf("kept: %v %v", err, r)
	}
	r = map[string]any{}
	if err := NewChat().BindPath("/openai/v1/chat/completions", r); err != nil || len(r) != 0 {
		t.Fatalf("v1: %v %v", err, r)
	}
}

// TestOpenAIWire: Azure's formats are OpenAI's wire — chat keys renumber
// tool-call ids and drop stream fields, usage is asked for in streams.
func TestOpenAIWire(t *testing.T) {
	req := map[string]any{"model": "m", "stream": true, "messages": []any{
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_abc", "type": "function"}}},
		map[string]any{"role": "tool", "tool_call_id": "call_abc", "content": "x"},
	}}
	k := NewChat().KeyRequest(req, nil)
	if _, ok := k["stream"]; ok {
		t.Error("stream kept in the key")
	}
	msgs := k["messages"].([]any)
	if msgs[1].(map[string]any)["tool_call_id"] != "call_1" {
		t.Errorf("tool-call ids not renumbered: %v", msgs)
	}
	var f provider.Format = NewChat()
	if inj, ok := f.(provider.UsageInjector); !ok || inj.IncludesUsage(req) {
		t.Error("chat must inject include_usage")
	}
	if NewChat().ErrorBody("invalid_request_error", "", "x") == nil {
		t.Error("no error body")
	}
	u, ok := Descriptor.Usage("", map[string]int64{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})
	if !ok || u.Total != 5 || u.Input != 3 {
		t.Errorf("usage %+v", u)
	}
}
