package registry

import (
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// TestParseRoutedDoesNotRouteAgain: a call is routed once (DESIGN §13.1).
// ParseRouted takes the format and endpoint Route gave and keys the request
// the same as ParseWith, without looking either up again: given a path no
// format routes, it still parses, so it cannot have routed it.
func TestParseRoutedDoesNotRouteAgain(t *testing.T) {
	body := []byte(`{"model":"gpt-4o-mini","temperature":0,"seed":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"again"}]}`)
	f, e, ok := Route("POST", "/v1/chat/completions")
	if !ok {
		t.Fatal("chat is not routed")
	}
	want, err := ParseWith("POST", "/v1/chat/completions", nil, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseRouted(f, e, "/not/a/route", nil, body, nil)
	if err != nil {
		t.Fatalf("ParseRouted routed the path again: %v", err)
	}
	if got.Key != want.Key || got.Format != want.Format || got.Endpoint != want.Endpoint {
		t.Errorf("ParseRouted = %s %s %T, ParseWith = %s %s %T", got.Key, got.Endpoint, got.Format, want.Key, want.Endpoint, want.Format)
	}
	// The lineage of a parsed request needs no lookup either, and agrees.
	p1, t1, ok1, err1 := LineageOf(got, nil)
	p2, t2, ok2, err2 := Lineage(string(provider.OpenAI), e, want.Body, want.Headers, nil)
	if p1 != p2 || t1 != t2 || ok1 != ok2 || err1 != nil || err2 != nil || !ok1 || t1 != 2 {
		t.Errorf("LineageOf = %s %d %v %v, Lineage = %s %d %v %v", p1, t1, ok1, err1, p2, t2, ok2, err2)
	}
}
