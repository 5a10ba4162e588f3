package snapshot_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// readBack is what a reader of doc's file sees: Decode of MarshalFile, or
// the error of either.
func readBack(doc map[string]any) (any, error) {
	data, err := snapshot.MarshalFile(doc)
	if err != nil {
		return nil, err
	}
	return snapshot.Decode(data)
}

// deepCopy copies a document through its Go values (numbers keep their Go
// types), so that AsDecoded's conversion in place leaves the original.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// nest wraps v in n levels of arrays.
func nest(v any, n int) any {
	for range n {
		v = []any{v}
	}
	return v
}

// AsDecoded turns a document into exactly what Decode reads from its file
// (the same values and Go types), or refuses it where the file would not
// read back; the refusal names the value's pointer.
func TestAsDecodedIsDecodeOfEncode(t *testing.T) {
	var docs []map[string]any
	for i := range 6 {
		doc, _, err := snapshottest.Build(gen.Item(i))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	docs = append(docs,
		map[string]any{"n": []any{int64(1 << 53), int(-7), float64(0.1), 1e20 * 10, json.Number("1.0"), json.Number("-0"), json.Number("1E2"), json.Number("0.50"), float64(2.5e-7)}},
		map[string]any{"s": "héllo \u2028 \x01 \"q\" \\", "k/~": map[string]any{"": nil, "b": true}},
		map[string]any{"deep": nest("x", snapshot.MaxDepth-2)},
	)
	for i, doc := range docs {
		want, err := readBack(doc)
		if err != nil {
			t.Fatalf("doc %d does not read back: %v", i, err)
		}
		got := deepCopy(doc).(map[string]any)
		if err := snapshot.AsDecoded(got); err != nil {
			t.Fatalf("doc %d: AsDecoded: %v", i, err)
		}
		if !reflect.DeepEqual(any(got), want) {
			t.Errorf("doc %d: AsDecoded differs from the decoded file:\n got  %#v\n want %#v", i, got, want)
		}
	}

	for _, c := range []struct {
		name string
		doc  map[string]any
		want string // in the error
	}{
		{"bad UTF-8 value", map[string]any{"a": []any{"ok", "\xff"}}, "not valid UTF-8 (at /a/1)"},
		{"bad UTF-8 key", map[string]any{"a": map[string]any{"k\xc3": 1}}, "object key is not valid UTF-8 (at /a/k\xc3)"},
		{"surrogate as UTF-8", map[string]any{"s": "\xed\xa0\x80"}, "not valid UTF-8 (at /s)"},
		{"int64 beyond 2^53", map[string]any{"n": int64(1<<53 + 1)}, "(at /n)"},
		{"number text beyond 2^53", map[string]any{"n": json.Number("12345678901234567890")}, "beyond 2^53"},
		{"float beyond 2^53", map[string]any{"x": map[string]any{"n": 1e20}}, "(at /x/n)"},
		{"NaN", map[string]any{"n": json.Number("NaN")}, "invalid number"},
		{"too deep", map[string]any{"d": nest("x", snapshot.MaxDepth)}, "nested deeper than"},
		{"other type", map[string]any{"t": []string{"a"}}, "cannot encode []string (at /t)"},
		{"pointer escapes", map[string]any{"a/b": map[string]any{"c~d": "\xff"}}, "(at /a~1b/c~0d)"},
	} {
		err := snapshot.AsDecoded(deepCopy(c.doc).(map[string]any))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: AsDecoded error %v, want one containing %q", c.name, err, c.want)
		}
		if _, rerr := readBack(c.doc); rerr == nil {
			t.Errorf("%s: the file reads back, but AsDecoded refuses it", c.name)
		}
	}
}

// FuzzAsDecoded: for any document, AsDecoded accepts it exactly when its
// file reads back, and then equals what is read.
func FuzzAsDecoded(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.50,-0,1e2,"x"],"b":{"c":null,"d":true}}`), "k", "v")
	f.Add([]byte(`{"n":123456789012345678901234}`), "\xff", "ok")
	f.Add([]byte(`[1e400]`), "k", "\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, data []byte, key, val string) {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		if len(data)%2 == 0 {
			dec.UseNumber() // json.Number texts as written, else float64
		}
		if dec.Decode(&v) != nil {
			return
		}
		doc := map[string]any{"v": v, key: val}
		want, rerr := readBack(doc)
		got := deepCopy(doc).(map[string]any)
		err := snapshot.AsDecoded(got)
		switch {
		case rerr != nil && err == nil:
			t.Fatalf("the file does not read back (%v) but AsDecoded accepts it", rerr)
		case rerr == nil && err != nil:
			t.Fatalf("the file reads back but AsDecoded refuses it: %v", err)
		case rerr == nil && !reflect.DeepEqual(any(got), want):
			t.Fatalf("AsDecoded differs from the decoded file:\n got  %#v\n want %#v", got, want)
		}
	})
}
