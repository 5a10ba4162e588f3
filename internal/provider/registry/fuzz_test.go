package registry_test

import (
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// FuzzParse: any method, path, anthropic-version and body either fail with
// ErrNotLLMCall/ErrBadRequest or give a well-formed, deterministic key.
// Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add("POST", "/v1/chat/completions", "", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":"x","stream":true}`))
	f.Add("POST", "/v1/messages", "2023-06-01", []byte(`{"model":"m","system":"s","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]}`))
	f.Add("POST", "/v1/completions", "", []byte(`{"model":"m","prompt":"p"}`))
	f.Add("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "", []byte(`{"model":"models/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	f.Add("POST", "/api/chat", "", []byte(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a"}]},{"role":"tool","tool_call_id":"a"}],"format":null}`))
	f.Fuzz(func(t *testing.T, method, path, version string, body []byte) {
		h := http.Header{}
		if version != "" {
			h.Set("anthropic-version", version)
		}
		req, err := registry.Parse(method, path, h, body)
		aliased, aerr := registry.ParseAliasingWith(method, path, h, slices.Clone(body), nil)
		if (err == nil) != (aerr == nil) || err != nil && err.Error() != aerr.Error() {
			t.Fatalf("Parse error %v, ParseAliasingWith error %v", err, aerr)
		}
		if err != nil {
			return
		}
		if !hex64.MatchString(req.Key) || !snapshot.ValidID(req.ID()) {
			t.Fatalf("key %q, id %q", req.Key, req.ID())
		}
		again, err := registry.Parse(method, path, h, body)
		if err != nil || again.Key != req.Key {
			t.Fatalf("Parse is not deterministic: %v %q %q", err, req.Key, again.Key)
		}
		// Key writes the key object's bytes directly: they are those of
		// the object KeyObject builds.
		obj, err := registry.KeyObject(string(req.Provider), req.Endpoint, req.Body, req.Headers, nil)
		if err != nil {
			t.Fatalf("KeyObject: %v", err)
		}
		if c, err := snapshot.Canonical(obj); err != nil || snapshot.SHA256Prefixed(c) != "sha256:"+req.Key {
			t.Fatalf("key %s is not the SHA-256 of the key object %s (%v)", req.Key, c, err)
		}
		if aliased.Key != req.Key || !reflect.DeepEqual(aliased.Body, req.Body) || aliased.Stream != req.Stream {
			t.Fatalf("ParseAliasingWith differs from Parse: %q %q", aliased.Key, req.Key)
		}
	})
}
