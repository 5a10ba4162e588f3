package snapshot

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// 10^6-deep nesting of every shape is refused at depth 257 with a clear
// error: no stack exhaustion, time and memory independent of the depth.
func TestDecodeMillionDeep(t *testing.T) {
	const n = 1_000_000
	shapes := map[string]string{
		"arrays":  strings.Repeat("[", n) + strings.Repeat("]", n),
		"objects": strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n),
		"mixed":   strings.Repeat(`[{"a":`, n/2) + "1" + strings.Repeat("}]", n/2),
		"open":    strings.Repeat("[", n), // never closed
		"in file": `{"version":"1.0.0","snapshots":[{"request":` + strings.Repeat("[", n),
	}
	for name, in := range shapes {
		t.Run(name, func(t *testing.T) {
			data := []byte(in)
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			start := time.Now()
			_, err := Decode(data)
			took := time.Since(start)
			runtime.ReadMemStats(&b)
			if !errors.Is(err, ErrMalformedJSON) || !strings.Contains(err.Error(), "nested deeper than 256") {
				t.Fatalf("error %v", err)
			}
			if took > time.Second {
				t.Errorf("took %v", took)
			}
			if alloc := b.TotalAlloc - a.TotalAlloc; alloc > 1<<20 {
				t.Errorf("allocated %d KiB before refusing", alloc>>10)
			}
		})
	}
}

// JSON keys are case-sensitive: "Model" and "model" are two distinct keys,
// both kept (the schema and the provider's own rules decide what an unknown
// one means), while an exact duplicate is always an error.
func TestDecodeCaseVariantAndDuplicateKeys(t *testing.T) {
	v, err := Decode([]byte(`{"model":"a","Model":"b","MODEL":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := v.(map[string]any); len(m) != 3 || m["model"] != "a" || m["Model"] != "b" {
		t.Errorf("case variants not kept apart: %v", m)
	}
	// Duplicates hidden by escapes or Unicode tricks are still duplicates;
	// look-alikes (fullwidth, combining) are different keys.
	for _, in := range []string{`{"model":1,"mod\u0065l":2}`, `{"a":{"x":1},"a":{"y":2}}`, `{"\u00e9":1,"` + "\u00e9" + `":2}`} {
		if _, err := Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), "duplicate object key") {
			t.Errorf("Decode(%s) = %v, want a duplicate-key error", in, err)
		}
	}
	for _, in := range []string{`{"model":1,"ｍodel":2}`, `{"\u00e9":1,"e\u0301":2}`} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("Decode(%s): %v; look-alike keys are distinct", in, err)
		}
	}
}

// Lone and reversed surrogates anywhere (values, keys, deep inside) are
// refused with the pointer of the string.
func TestDecodeSurrogatesInKeysAndValues(t *testing.T) {
	for in, ptr := range map[string]string{
		`{"\ud800":1}`:                      "",
		`{"a":["ok","\udfff"]}`:             "/a/1",
		`{"a":"\ude00\ud83d"}`:              "/a",
		`{"a":{"b":"x\ud83d"}}`:             "/a/b",
		`{"a":"\ud83d\u0041"}`:              "/a",
		`{"snapshots":[{"id":"\ud800"}]}`:   "/snapshots/0/id",
		"{\"a\":\"\xed\xa0\x80\"}":          "", // a surrogate encoded in UTF-8 (CESU) is invalid UTF-8
		"{\"a\":\"\xf4\x90\x80\x80\"}":      "", // beyond U+10FFFF
		"{\"a\":\"\xc0\xaf\"}":              "", // overlong "/"
		"{\"a\":\"ok\"}\xff":                "", // garbage after the document
		"{\"a\":\"ok\"}\n\x00":              "", // a NUL after the document
		"{\"a\x00\":1}":                     "", // a raw NUL in a key
		`{"a":"` + "\x7f" + `"}` + "\u2028": "", // trailing U+2028
	} {
		_, err := Decode([]byte(in))
		if !errors.Is(err, ErrMalformedJSON) {
			t.Errorf("Decode(%q) = %v, want ErrMalformedJSON", in, err)
			continue
		}
		var de *DecodeError
		if ptr != "" && (!errors.As(err, &de) || de.Pointer != ptr) {
			t.Errorf("Decode(%q) = %v, want pointer %q", in, err, ptr)
		}
	}
}

// Hostile names for ids, providers and relative paths: none is accepted and
// none panics (untrusted manifest entries and file names go through these).
func TestValidRelPathHostileNames(t *testing.T) {
	long := strings.Repeat("a", 1<<16)
	bad := []string{
		"", "/", "openai/", "openai/.json", "../openai/0123456789ab.json", "openai/../0123456789ab.json",
		"openai/./0123456789ab.json", "./openai/0123456789ab.json", "openai//0123456789ab.json",
		"/etc/passwd", "C:\\openai\\0123456789ab.json", "C:/openai/0123456789ab.json", "openai/C:0123456789ab.json",
		"openai/0123456789ab.json\x00", "openai/\x000123456789a.json", "openai\x00/0123456789ab.json",
		"openai/CON.json", "openai/con.json", "openai/NUL.json", "openai/COM1.json", "openai/LPT1.json",
		"openai/aux.json", "openai/" + long + ".json", "openai/" + long, long,
		"openai/０１２３４５６７８９ab.json", "openai/0123456789ａｂ.json", "ｏpenai/0123456789ab.json",
		"оpenai/0123456789ab.json", "openai/0123456789ab.ｊson", "openai/0123456789ab.json/",
		"openai/0123456789ab\u200b.json", "\u202eopenai/0123456789ab.json", "openai/0123456789ab.JSON",
		"openai/0123456789abc.json", "openai/0123456789a.json", "openai/0123456789ab..json",
		"openai/%2e%2e/0123456789ab.json", "openai/0123456789ab.json?x", "anthropic/0123456789ab.json.tmp-1",
		"anthropic/.0123456789ab.tmp-abcdef",
	}
	for _, b := range bad {
		if p, id, ok := ValidRelPath(b); ok {
			t.Errorf("ValidRelPath(%q) accepted (%q, %q)", b, p, id)
		}
	}
	for _, id := range []string{"", "CON", "0123456789AB", "０１２３４５６７８９ab", "../../etc/pa", "0123456789a\x00", long} {
		if ValidID(id) {
			t.Errorf("ValidID(%q)", id)
		}
	}
	for _, p := range []string{"", "OpenAI", "ｏpenai", "openai ", "../openai", "openai/", "google"} {
		if ValidProvider(p) {
			t.Errorf("ValidProvider(%q)", p)
		}
	}
}

// Regression (found by FuzzDecode, seed float-beyond-2-53): 1E20 was
// accepted, then written by the canonical encoder as the integer
// 100000000000000000000, which Decode refuses, so a file record wrote could
// not be read back. A float whose integral value is beyond 2^53 and is
// written without an exponent is refused like the integer; everything
// accepted round-trips.
func TestDecodeFloatBeyond2to53(t *testing.T) {
	for _, in := range []string{"1E20", "1e16", "-2e17", "9.1e15", "9007199254740993.5", "1e20"} {
		if _, err := Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), "beyond 2^53") {
			t.Errorf("Decode(%s) = %v, want the 2^53 error", in, err)
		}
	}
	for _, in := range []string{"1e21", "-1e21", "1e300", "9e15", "9007199254740992.0", "1.5", "-0.0", "5e-324"} {
		v, err := Decode([]byte(in))
		if err != nil {
			t.Errorf("Decode(%s): %v", in, err)
			continue
		}
		out, err := MarshalPretty(v)
		if err != nil {
			t.Fatalf("MarshalPretty(%s): %v", in, err)
		}
		if _, err := Decode(out); err != nil {
			t.Errorf("%s written as %q does not read back: %v", in, out, err)
		}
	}
}
