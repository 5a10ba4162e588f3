package registry_test

import (
	"encoding/json"
	"net/http"
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

// TestParseHTTPReadsWholeBody: the body is read to its end whatever
// Content-Length claims (exact, too small, too large, unknown, beyond the
// presized limit), and keys like Parse.
func TestParseHTTPReadsWholeBody(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`
	want, err := registry.Parse("POST", "/v1/chat/completions", http.Header{}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range []int64{int64(len(body)), 0, 10, int64(len(body)) - 1, int64(len(body)) + 100, -1, 64 << 20} {
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
		r.ContentLength = cl
		got, err := registry.ParseHTTP(r)
		if err != nil {
			t.Fatalf("Content-Length %d: %v", cl, err)
		}
		if string(got.Raw) != body || got.Key != want.Key {
			t.Errorf("Content-Length %d: read %d bytes, key %s; want %d bytes, key %s", cl, len(got.Raw), got.Key, len(body), want.Key)
		}
	}
}
