package normalize

import (
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// FuzzNormalize parses arbitrary "normalize" values and applies whatever
// parses to an arbitrary request: no panic, the input request is never
// modified, the result is still canonicalizable, and applying the same set
// twice gives the same key (rules are deterministic).
func FuzzNormalize(f *testing.F) {
	f.Add(`[{"rule":"uuid"},{"rule":"drop","paths":["/user","/messages/*"]}]`, `{"user":"u","messages":[{"content":"123e4567-e89b-12d3-a456-426614174000"}]}`)
	f.Add(`[{"rule":"regex","pattern":"(a+)","replace":"${1}b","paths":["","/x/*/y"]}]`, `{"x":[{"y":"aaa"},{"y":["a",1,null]}]}`)
	f.Add(`[{"rule":"iso-datetime"},{"rule":"date"},{"rule":"unix-ms"},{"rule":"ulid"}]`, `{"prompt":"2026-01-09T10:30:00Z 1767954600000 01ARZ3NDEKTSV4RRFFQ69G5FAV"}`)
	f.Add(`[{"rule":"drop","paths":["/a/0","/a/1","/a/*/b","/a/~1"]}]`, `{"a":[{"b":1},{"b":2},3]}`)
	f.Fuzz(func(t *testing.T, cfg, req string) {
		cv, err := snapshot.Decode([]byte(cfg))
		if err != nil {
			return
		}
		s, err := Parse(cv)
		if err != nil {
			return
		}
		rv, err := snapshot.Decode([]byte(req))
		if err != nil {
			return
		}
		m, ok := rv.(map[string]any)
		if !ok {
			return
		}
		before, err := snapshot.Canonical(m)
		if err != nil {
			return
		}
		out, applied := s.NormalizeKey(m)
		after, err := snapshot.Canonical(m)
		if err != nil || string(after) != string(before) {
			t.Fatalf("input modified: %s → %s", before, after)
		}
		k1, err := snapshot.Canonical(out)
		if err != nil {
			t.Fatalf("result not canonicalizable: %v", err)
		}
		out2, applied2 := s.NormalizeKey(m)
		k2, _ := snapshot.Canonical(out2)
		if string(k1) != string(k2) || len(applied) != len(applied2) {
			t.Fatalf("not deterministic: %s vs %s", k1, k2)
		}
		if (len(applied) == 0) != (string(k1) == string(before)) {
			t.Fatalf("applied %v but key changed=%v", applied, string(k1) != string(before))
		}
	})
}
