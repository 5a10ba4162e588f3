package completions_test

import (
	"encoding/json"
	"testing"

	"github.com/traceforge/traceforge/internal/provider/openai/completions"
)

func TestKeyRequestAndOwnership(t *testing.T) {
	f := completions.New()
	req := map[string]any{"model": "m", "prompt": "p", "stream": true, "stream_options": map[string]any{"include_usage": true}}
	got, _ := json.Marshal(f.KeyRequest(req, nil))
	if string(got) != `{"model":"m","prompt":"p"}` {
		t.Errorf("KeyRequest = %s", got)
	}
	if _, ok := req["stream"]; !ok {
		t.Error("KeyRequest modified its input")
	}
	if !f.OwnsRecord(map[string]any{"prompt": "p"}) || f.OwnsRecord(map[string]any{"prompt": "p", "messages": []any{}}) {
		t.Error("completions owns prompt requests without messages")
	}
	for path, want := range map[string]bool{"/v1/completions": true, "/openai/completions": true, "/v1/chat/completions": false} {
		if _, ok := f.Route("POST", path); ok != want {
			t.Errorf("Route(POST %s) = %v", path, ok)
		}
	}
}
