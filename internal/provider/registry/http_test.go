package registry_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

func TestWriteMiss(t *testing.T) {
	for _, p := range []provider.Name{provider.OpenAI, provider.Anthropic} {
		rec := httptest.NewRecorder()
		provider.WriteMiss(rec, &provider.Request{Format: registry.ForProvider(p), Provider: p, Endpoint: provider.Messages, Key: strings.Repeat("ab", 32)})
		if rec.Code != 404 || rec.Header().Get("x-should-retry") != "false" || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %v", p, rec.Code, rec.Header())
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		e, _ := v["error"].(map[string]any)
		if msg, _ := e["message"].(string); !strings.Contains(msg, strings.Repeat("ab", 32)) || !strings.Contains(msg, "record") {
			t.Fatalf("%s: message %q", p, msg)
		}
		if p == provider.Anthropic && v["type"] != "error" {
			t.Fatalf("anthropic shape: %v", v)
		}
	}
}
