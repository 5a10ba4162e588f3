package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestDecodeRejects(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	cases := []struct {
		name, in, want string
	}{
		{"bom", "\xEF\xBB\xBF{}", "byte order mark"},
		{"invalid utf8", "{\"a\":\"\xff\"}", "invalid UTF-8"},
		{"duplicate key", `{"a":1,"a":2}`, `duplicate object key "a"`},
		{"nested duplicate", `{"x":{"b":1,"b":1}}`, `duplicate object key "b"`},
		{"trailing", `{} {}`, "trailing data"},
		{"truncated", `{"a": [1, 2`, "unexpected end of JSON"},
		{"truncated string", `{"a": "abc`, "unterminated string"},
		{"huge int", `{"n": 9007199254740993}`, "beyond 2^53"},
		{"huge negative", `{"n": -99999999999999999999}`, "beyond 2^53"},
		{"lone high surrogate", `{"s":"\ud800"}`, "lone surrogate"},
		{"lone low surrogate", `{"s":"\udc00x"}`, "lone surrogate"},
		{"deep", deep, "nested deeper than 256"},
		{"leading zero", `{"n": 01}`, "leading zero"},
		{"control char", "{\"s\":\"a\nb\"}", "control character"},
		{"bad escape", `{"s":"\q"}`, "invalid escape"},
		{"bad literal", `{"b": tru}`, "invalid literal"},
		{"single quotes", `{'a':1}`, "expected a quoted object key"},
		{"empty", ``, "unexpected end of JSON"},
		{"nan", `{"n": NaN}`, "unexpected character"},
		{"overflow float", `{"n": 1e999}`, "out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if err == nil {
				t.Fatalf("Decode(%q) succeeded, want error containing %q", tc.in, tc.want)
			}
			if _, aerr := DecodeAliasing([]byte(tc.in)); aerr == nil || aerr.Error() != err.Error() {
				t.Errorf("DecodeAliasing(%q) = %v, want Decode's error %v", tc.in, aerr, err)
			}
			if !errors.Is(err, ErrMalformedJSON) {
				t.Errorf("error %v does not wrap ErrMalformedJSON", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode(%q) = %v, want it to mention %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestDecodePointerAndPosition(t *testing.T) {
	_, err := Decode([]byte("{\n  \"a\": [1, {\"b\": 1, \"b\": 2}]\n}"))
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("want *DecodeError, got %v", err)
	}
	if de.Pointer != "/a/1/b" || de.Line != 2 {
		t.Errorf("pointer %q line %d, want /a/1/b line 2", de.Pointer, de.Line)
	}
}

func TestDecodeAccepts(t *testing.T) {
	in := `{"s":"h\u00e9\ud83d\ude00\n","n":[0,-1,1.5,1e3,9007199254740992],"b":[true,false,null],"o":{}}`
	v, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["s"] != "hé😀\n" {
		t.Errorf("string = %q", m["s"])
	}
	if n := m["n"].([]any); n[4] != json.Number("9007199254740992") {
		t.Errorf("2^53 = %v", n[4])
	}
}

// TestDecodeAliasing: DecodeAliasing gives Decode's values, its plain
// strings, keys and numbers share the input's memory (so changing the input
// shows through), strings with escapes are built apart, and Decode copies.
func TestDecodeAliasing(t *testing.T) {
	in := []byte(`{"plain":"abc","esc":"a\nb","n":12,"e":""}`)
	want, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	v, err := DecodeAliasing(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("DecodeAliasing = %#v, want %#v", v, want)
	}
	inside := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(&in[0]))
		return len(s) > 0 && p >= lo && p < lo+uintptr(len(in))
	}
	m := v.(map[string]any)
	if !inside(m["plain"].(string)) || !inside(string(m["n"].(json.Number))) {
		t.Errorf("plain string %q / number %v do not share the input", m["plain"], m["n"])
	}
	for k := range m {
		if !inside(k) {
			t.Errorf("key %q does not share the input", k)
		}
	}
	if inside(m["esc"].(string)) {
		t.Errorf("escaped string %q shares the input", m["esc"])
	}
	copied := want.(map[string]any)
	if inside(copied["plain"].(string)) {
		t.Errorf("Decode's string %q shares the input", copied["plain"])
	}
}

// TestDecodeAliasingBoxes: the strings and numbers DecodeAliasing boxes in
// shared slabs (decoder.box) are ordinary values: across several slabs and
// a collection while only the result holds them, they compare, switch on
// their type, hash as map keys and canonicalize like Decode's.
func TestDecodeAliasingBoxes(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[`)
	const n = 3 * maxStrSlab // several slabs
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d",%d,"e\u00e9%d"`, i, i, i)
	}
	b.WriteString(`]`)
	data := []byte(b.String())
	got, err := DecodeAliasing(data)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	want, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("DecodeAliasing differs from Decode")
	}
	items := got.([]any)
	seen := map[any]int{}
	for i := range n {
		s, num, esc := items[3*i], items[3*i+1], items[3*i+2]
		if s != any(fmt.Sprintf("s%d", i)) || num != any(json.Number(strconv.Itoa(i))) || esc != any(fmt.Sprintf("eé%d", i)) {
			t.Fatalf("item %d: %#v %#v %#v", i, s, num, esc)
		}
		switch v := num.(type) {
		case string:
			t.Fatalf("number %q boxed as a string", v)
		case json.Number:
		default:
			t.Fatalf("number boxed as %T", v)
		}
		if _, ok := s.(string); !ok {
			t.Fatalf("string boxed as %T", s)
		}
		seen[s]++
		seen[num]++
	}
	if len(seen) != 2*n {
		t.Fatalf("%d distinct map keys, want %d", len(seen), 2*n)
	}
	c1, _ := Canonical(got)
	c2, _ := Canonical(want)
	if string(c1) != string(c2) {
		t.Fatal("canonical bytes differ")
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `1e5`, `{"a":1,"a":2}`, "\xEF\xBB\xBF{}",
		`{"long plain key, longer than a word":"a long value with an escape\nafter sixteen bytes and a \"quote\" é 日本"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		av, aerr := DecodeAliasing(slices.Clone(data))
		if (err == nil) != (aerr == nil) || err != nil && err.Error() != aerr.Error() {
			t.Fatalf("Decode error %v, DecodeAliasing error %v", err, aerr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(v, av) {
			t.Fatalf("DecodeAliasing = %#v, Decode = %#v", av, v)
		}
		// Whatever we accept, the standard library accepts, and it
		// canonicalizes and pretty-prints back to the same value.
		if !json.Valid(data) {
			t.Fatalf("Decode accepted invalid JSON %q", data)
		}
		c1, err := Canonical(v)
		if err != nil {
			t.Fatalf("Canonical of accepted value: %v", err)
		}
		pretty, err := MarshalPretty(v)
		if err != nil {
			t.Fatalf("MarshalPretty: %v", err)
		}
		v2, err := Decode(pretty)
		if err != nil {
			t.Fatalf("re-decode of pretty output %q: %v", pretty, err)
		}
		c2, err := Canonical(v2)
		if err != nil || string(c1) != string(c2) {
			t.Fatalf("round trip changed canonical bytes:\n%s\n%s", c1, c2)
		}
	})
}

// TestPlainEnd: the word-at-a-time scans find the same first byte to
// escape (plainEnd; plainASCIIEnd: or the first non-ASCII byte) as a byte
// loop, wherever it sits in the words, next to multi-byte UTF-8 and bytes
// on either side of each boundary value.
func TestPlainEnd(t *testing.T) {
	slow := func(s string, i int) int {
		for ; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
				return i
			}
		}
		return i
	}
	slowASCII := func(s string, i int) int {
		for ; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return i
			}
		}
		return i
	}
	specials := []byte{0x00, 0x1f, '"', '\\', '\n', 0x80, 0xc3}
	fillers := []string{"a", "é", "\x20", "\x21", "#", "[", "]", "\x7f", "\xff", "日"}
	for _, f := range fillers {
		for n := 0; n < 24; n++ {
			base := strings.Repeat(f, n)
			for _, sp := range append(specials, 0) {
				s := base
				if sp != 0 || n%2 == 0 {
					s = base + string(sp) + base
				}
				for start := 0; start <= len(s); start++ {
					if got, want := plainEnd(s, start), slow(s, start); got != want {
						t.Fatalf("plainEnd(%q, %d) = %d, want %d", s, start, got, want)
					}
					if got, want := plainEnd([]byte(s), start), slow(s, start); got != want {
						t.Fatalf("plainEnd([]byte %q, %d) = %d, want %d", s, start, got, want)
					}
					if got, want := plainASCIIEnd(s, start), slowASCII(s, start); got != want {
						t.Fatalf("plainASCIIEnd(%q, %d) = %d, want %d", s, start, got, want)
					}
				}
			}
		}
	}
}
