package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeCanonicalAgrees checks that WriteCanonical, cut into pieces of
// chunk bytes, writes exactly Canonical's bytes, and CanonicalSHA256
// hashes them.
func writeCanonicalAgrees(t *testing.T, v any, chunk int) {
	t.Helper()
	want, err := Canonical(v)
	if err != nil {
		if werr := WriteCanonical(&bytes.Buffer{}, v); werr == nil {
			t.Fatalf("Canonical fails (%v), WriteCanonical does not", err)
		}
		return
	}
	old := canonicalChunk
	canonicalChunk = chunk
	defer func() { canonicalChunk = old }()
	var got bytes.Buffer
	if err := WriteCanonical(&got, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("chunk %d: WriteCanonical wrote\n%s\nCanonical gives\n%s", chunk, got.Bytes(), want)
	}
	if h, err := CanonicalSHA256(v); err != nil || h != SHA256Prefixed(want) {
		t.Fatalf("CanonicalSHA256 = %s, %v; want %s", h, err, SHA256Prefixed(want))
	}
}

func TestWriteCanonicalMatchesCanonical(t *testing.T) {
	docs := []string{`{}`, `[]`, `"x"`, `1e21`, `{"b":[1,2,{"z":null,"a":"\u00e9\n"}],"a":{"c":[[],[{}]]}}`,
		`{"snapshots":[` + strings.Repeat(`{"id":"abc","hash":"sha256:00"},`, 300) + `{"id":"x"}],"version":"1.1.0"}`}
	for _, d := range docs {
		v, err := Decode([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{1, 7, 64, 1 << 16} {
			writeCanonicalAgrees(t, v, chunk)
		}
	}
}

func FuzzWriteCanonical(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",{"b":null}],"c":"\u0001"}`), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		writeCanonicalAgrees(t, v, int(chunk)+1)
	})
}

// TestCanonicalSortsManyAndNonASCIIKeys: objects with more keys than the
// stack array holds, and keys whose UTF-16 order differs from their byte
// order, come out as the JCS library writes them.
func TestCanonicalSortsManyAndNonASCIIKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"\uFFFD":1,"😀":2,"é":3,"e":4`)
	for i := 0; i < 30; i++ {
		b.WriteString(`,"k` + strings.Repeat("z", i%7) + string(rune('a'+i%26)) + `":` + string(rune('0'+i%10)))
	}
	b.WriteString(`}`)
	for _, d := range []string{b.String(), `{"b":1,"a":{"😀":1,"\uFFFD":2}}`} {
		v, err := Decode([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := libraryCanonical(t, v); !bytes.Equal(got, want) {
			t.Fatalf("Canonical\n%s\njcs.Transform\n%s", got, want)
		}
	}
}

// referenceCanonical is the canonical writer as it was before strings were
// checked for UTF-8 while being escaped and object members sorted as
// pairs: every key checked, then sorted, then looked up; every string
// checked with utf8.ValidString, then escaped. AppendCanonical is held to
// it byte for byte and error for error, invalid UTF-8 included (which the
// decoder never produces, but callers' values can hold).
func referenceCanonical(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("canonicalize: string is not valid UTF-8")
		}
		return appendJCSString(dst, x), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = referenceCanonical(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		var keys []string
		for k := range x {
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("canonicalize: object key is not valid UTF-8")
			}
			keys = append(keys, k)
		}
		sortUTF16(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJCSString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = referenceCanonical(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return AppendCanonical(dst, v) // scalars other than strings: unchanged
}

// canonicalMatchesReference checks AppendCanonical against
// referenceCanonical on v, and AppendCanonicalString against it on every
// string and key of v.
func canonicalMatchesReference(t *testing.T, v any) {
	t.Helper()
	got, err := AppendCanonical([]byte("prefix"), v)
	want, werr := referenceCanonical([]byte("prefix"), v)
	if fmt.Sprint(err) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
		t.Fatalf("%#v:\nAppendCanonical %q, %v\nreference       %q, %v", v, got, err, want, werr)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			got, err := AppendCanonicalString(nil, x)
			want, werr := referenceCanonical(nil, x)
			if fmt.Sprint(err) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
				t.Fatalf("AppendCanonicalString(%q) = %q, %v; reference %q, %v", x, got, err, want, werr)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		}
	}
	walk(v)
}

func TestCanonicalMatchesReference(t *testing.T) {
	many := map[string]any{}
	for i := 0; i < 40; i++ {
		many[fmt.Sprintf("k%02d", 39-i)] = i
	}
	manyUnicode := map[string]any{"é": 1, "😀": 2, "\uFFFD": 3}
	for i := 0; i < 20; i++ {
		manyUnicode[fmt.Sprintf("k%d", i)] = strings.Repeat("日本", i)
	}
	for _, v := range []any{
		"", "plain ascii longer than eight bytes", "é", "é then ascii \"quoted\"\n", "ascii then é\t\u0001 and more",
		"bad \xff byte", "\xff", "sixteen bytes...\xc3", "ok é then bad \xe2\x82",
		map[string]any{"b": "x", "a": []any{"y", map[string]any{"\xff": 1}}},
		map[string]any{"a": "bad \xff", "\xfe": "x"}, // both a bad key and a bad value: the key is reported
		map[string]any{"z": 1, "é": "é", "e\u0301": 2, "\U0001F600": 3, "\uFF71": 4},
		many, manyUnicode, []any{nil, true, 1.5, json.Number("10"), int64(3), "x\xff"},
	} {
		canonicalMatchesReference(t, v)
	}
}

// FuzzCanonicalMatchesReference: any decoded document, with an arbitrary
// (maybe invalid UTF-8) string planted as a key and as a value.
func FuzzCanonicalMatchesReference(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",{"b":null}],"c":"\u0001"}`), "k\xff")
	f.Add([]byte(`{"é":"日本語 text past a word","a":"\"quoted\" \\ and \u001f"}`), "é")
	f.Fuzz(func(t *testing.T, data []byte, s string) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		canonicalMatchesReference(t, v)
		canonicalMatchesReference(t, map[string]any{"doc": v, s: s})
		canonicalMatchesReference(t, []any{v, s})
	})
}
