package provider

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestPointerChanges(t *testing.T) {
	dec := func(s string) any {
		v, err := snapshot.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a := dec(`{"model":"m","seed":7,"messages":[{"role":"user","content":"a"},{"role":"user","content":"x"}],"a/b":1}`)
	b := dec(`{"model":"m","user":"u","messages":[{"role":"user","content":"b"},{"role":"user","content":"x"},{"role":"user","content":"y"}],"a/b":2}`)
	got := strings.Join(PointerChanges(a, b), "\n")
	want := strings.Join([]string{
		`/a~1b: 1 → 2`,
		`/messages/0/content: "a" → "b"`,
		`/messages/2: absent → {"content":"y","role":"user"}`,
		`/seed: 7 → absent`,
		`/user: absent → "u"`,
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if c := PointerChanges(a, a); len(c) != 0 {
		t.Errorf("equal values: %v", c)
	}
	if got := PointerChanges(dec(`[1]`), dec(`[]`)); len(got) != 1 || got[0] != "/0: 1 → absent" {
		t.Errorf("root array: %v", got)
	}
}
