package snapshot

import (
	"encoding/json"
	"testing"
)

func TestSameJSON(t *testing.T) {
	doc := func() map[string]any {
		return map[string]any{
			"a": []any{json.Number("1"), "x", true, nil, map[string]any{"n": json.Number("1.50")}},
			"b": int64(7), "c": 2.5, "d": 3,
		}
	}
	same := []struct {
		name string
		b    any
	}{
		{"itself", doc()},
		{"numbers by value", map[string]any{
			"a": []any{int64(1), "x", true, nil, map[string]any{"n": 1.5}},
			"b": json.Number("7"), "c": json.Number("2.5e0"), "d": int64(3),
		}},
	}
	for _, tc := range same {
		if !SameJSON(doc(), tc.b) {
			t.Errorf("%s: not the same", tc.name)
		}
	}
	if d := doc(); !SameJSON(d, d) {
		t.Error("the same map: not the same")
	}
	differ := map[string]func(m map[string]any){
		"missing member":  func(m map[string]any) { delete(m, "b") },
		"extra member":    func(m map[string]any) { m["e"] = nil },
		"other string":    func(m map[string]any) { m["a"].([]any)[1] = "y" },
		"string vs num":   func(m map[string]any) { m["b"] = "7" },
		"other number":    func(m map[string]any) { m["c"] = json.Number("2.51") },
		"null vs false":   func(m map[string]any) { m["a"].([]any)[3] = false },
		"shorter array":   func(m map[string]any) { m["a"] = m["a"].([]any)[:4] },
		"nested object":   func(m map[string]any) { m["a"].([]any)[4].(map[string]any)["n"] = json.Number("2") },
		"not a JSON type": func(m map[string]any) { m["b"] = struct{}{} },
	}
	// A value no snapshot file can hold is the same as nothing, itself included.
	if SameJSON(int64(1)<<60, int64(1)<<60) {
		t.Error("an integer beyond 2^53 is the same as itself; a file cannot hold it")
	}
	for name, change := range differ {
		b := doc()
		change(b)
		if SameJSON(doc(), b) || SameJSON(b, doc()) {
			t.Errorf("%s: reported the same", name)
		}
	}
}
