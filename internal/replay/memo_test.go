package replay

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
)

// TestRequestDigest: every input of registry.Parse changes the digest —
// method, path, each stored header (absent, empty and repeated differ) and
// the body — and field boundaries cannot be shifted.
func TestRequestDigest(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	body := []byte(`{"model":"m"}`)
	seen := map[[32]byte]string{}
	for name, d := range map[string][32]byte{
		"base":          RequestDigest("POST", "/v1/messages", h(), body),
		"method":        RequestDigest("PUT", "/v1/messages", h(), body),
		"path":          RequestDigest("POST", "/v1/messages/", h(), body),
		"shifted":       RequestDigest("POST/v1", "/messages", h(), body),
		"version":       RequestDigest("POST", "/v1/messages", h("anthropic-version", "2023-06-01"), body),
		"empty version": RequestDigest("POST", "/v1/messages", h("anthropic-version", ""), body),
		"beta":          RequestDigest("POST", "/v1/messages", h("anthropic-beta", "a"), body),
		"beta twice":    RequestDigest("POST", "/v1/messages", h("anthropic-beta", "a", "anthropic-beta", "a"), body),
		"beta joined":   RequestDigest("POST", "/v1/messages", h("anthropic-beta", "a,a"), body),
		"body":          RequestDigest("POST", "/v1/messages", h(), []byte(`{"model":"n"}`)),
	} {
		if other, dup := seen[d]; dup {
			t.Errorf("%s and %s have the same digest", name, other)
		}
		seen[d] = name
	}
	if RequestDigest("POST", "/p", h("Authorization", "x", "anthropic-version", "v"), body) != RequestDigest("POST", "/p", h("anthropic-version", "v"), body) {
		t.Error("headers Parse does not read must not change the digest")
	}
}

// TestMemo: a remembered request comes back as a copy without Body and Raw;
// the memo never holds more than two generations; an entry used from the
// previous generation survives the next turn-over; the nil memo (negative
// size) remembers nothing.
func TestMemo(t *testing.T) {
	m := NewMemo(2)
	digest := func(i int) [32]byte { return RequestDigest("POST", fmt.Sprint("/", i), nil, nil) }
	snaps := make([]*check.Snapshot, 5)
	for i := range snaps {
		snaps[i] = &check.Snapshot{Key: fmt.Sprint("k", i)}
		m.Put(digest(i), &provider.Request{Key: snaps[i].Key, Stream: true, Provider: provider.Anthropic, Endpoint: provider.Messages,
			Headers: map[string]any{"anthropic-version": "v"}, KeyNormalizers: []string{"date"}, IncludeUsage: true,
			Body: map[string]any{"a": 1}, Raw: []byte("x")}, snaps[i])
		if i == 2 {
			// 0 and 1 are now the previous generation: using 0 moves it back.
			if _, s := m.Get(digest(0)); s != snaps[0] {
				t.Fatal("entry 0 lost before its time")
			}
		}
		if m.Len() > 4 {
			t.Fatalf("after %d puts the memo holds %d entries, more than 2 generations of 2", i+1, m.Len())
		}
	}
	req, s := m.Get(digest(4))
	if s != snaps[4] || req.Key != "k4" || !req.Stream || !req.IncludeUsage || req.Provider != provider.Anthropic || req.Endpoint != provider.Messages ||
		req.Headers["anthropic-version"] != "v" || len(req.KeyNormalizers) != 1 || req.Body != nil || req.Raw != nil {
		t.Fatalf("got %+v %v", req, s)
	}
	req.Key = "changed"
	if again, _ := m.Get(digest(4)); again.Key != "k4" {
		t.Error("Get must return a copy")
	}
	if _, s := m.Get(digest(1)); s != nil {
		t.Error("entry 1 should have been dropped with its generation")
	}
	if _, s := m.Get(digest(9)); s != nil {
		t.Error("unknown digest found")
	}
	var off *Memo = NewMemo(-1)
	off.Put(digest(0), &provider.Request{}, snaps[0])
	if _, s := off.Get(digest(0)); s != nil || off.Len() != 0 {
		t.Error("the nil memo must remember nothing")
	}
}
