package snapshot

import (
	"encoding/json"

	"bytes"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/traceforge/traceforge/internal/source"
)

func mustDecode(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func TestCanonicalRFC8785(t *testing.T) {
	// Examples from RFC 8785 §3.2.2/3.2.3: number formatting, key order by UTF-16 units.
	v := mustDecode(t, `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`)
	got, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	if string(got) != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
	sorted := mustDecode(t, `{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`)
	got, _ = Canonical(sorted)
	want = "{\"\\r\":2,\"1\":4,\"\u0080\":6,\"ö\":7,\"€\":1,\"😀\":5,\"\ufb33\":3}"
	if string(got) != want {
		t.Errorf("key order =\n%s\nwant\n%s", got, want)
	}
}

func TestPrettyMatchesCanonicalOrderAndNumbers(t *testing.T) {
	v := mustDecode(t, `{"b":0.0,"a":1.50,"c":"<&>","\u00f6":[],"\ud83d\ude00":{}}`)
	got, err := MarshalPretty(v)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": 1.5,\n  \"b\": 0,\n  \"c\": \"<&>\",\n  \"ö\": [],\n  \"😀\": {}\n}\n"
	if string(got) != want {
		t.Errorf("pretty =\n%s\nwant\n%s", got, want)
	}
}

func TestRecordAndFileHashes(t *testing.T) {
	req := mustDecode(t, `{"model":"gpt-4-turbo","messages":[{"role":"user","content":"Hello"}],"temperature":0,"max_tokens":100,"seed":42}`)
	key := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	rec, err := NewRecord(key, "/v1/chat/completions", &Lineage{ParentID: "0123456789ab", Turn: 2}, time.Date(2026, 1, 9, 10, 30, 0, 0, time.UTC), source.Source{File: "src/a.py", Line: 12, Function: "f"}, req, nil,
		Response{Fields: Fields{Content: "Hi", TokensUsed: 10, FinishReason: "stop"}, LatencyMS: 450})
	if err != nil {
		t.Fatal(err)
	}
	if rec["id"] != IDOf(key) {
		t.Fatal("id is the key prefix")
	}
	if l, _ := rec["lineage"].(map[string]any); l["parent_id"] != "0123456789ab" || l["turn"] != int64(2) {
		t.Errorf("lineage = %v", rec["lineage"])
	}
	doc, _ := FileDocument(rec)
	data, _ := MarshalFile(doc)
	back := mustDecode(t, string(data))
	r2 := back["snapshots"].([]any)[0].(map[string]any)
	h, _ := RecordHash(r2)
	if h != rec["hash"] {
		t.Errorf("hash after write/read %s != %s", h, rec["hash"])
	}
	again, _ := MarshalFile(back)
	if !bytes.Equal(again, data) {
		t.Error("re-marshalling a read file must give the same bytes")
	}
	if !bytes.HasPrefix(data, []byte("{\n  \"version\": \""+Version+"\",\n  \"snapshots\": [\n    {\n      \"id\":")) {
		t.Errorf("key order wrong:\n%s", data)
	}
}

// libraryCanonical is the reference: serialize, then jcs.Transform.
func libraryCanonical(t *testing.T, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	out, err := jcs.Transform(bytes.TrimRight(buf.Bytes(), "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCanonicalMatchesLibrary(t *testing.T) {
	for _, s := range []string{
		`{"b":[1,2.5,-0,1e-7,123456789012345,0.1,1e21,5e-324],"a":{"\u00e9":"x","e\u0301":"y","\ud83d\ude00":1,"\uff71":2},"c":"\u0000\u001f\"\\/<>&\u2028"}`,
		`[true,false,null,"",{},[]]`,
		`{"n":-9007199254740992,"m":9007199254740992,"f":1.0,"g":100,"h":-1.5e300}`,
	} {
		v := mustDecode0(t, s)
		c, err := Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		if lib := libraryCanonical(t, v); !bytes.Equal(c, lib) {
			t.Errorf("%s:\n ours %s\n lib  %s", s, c, lib)
		}
	}
}

func mustDecode0(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func FuzzCanonical(f *testing.F) {
	f.Add(`{"a":1.0,"b":[1e2,"x"]}`)
	f.Add(`{"\u00e9":"\u0000","a":-0.0}`)
	f.Add(`{"a key longer than eight bytes":"sixteen bytes...\u001f then \"quoted\" \\ and é日本 text past a word"}`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Decode([]byte(s))
		if err != nil {
			return
		}
		c, err := Canonical(v)
		if err != nil {
			t.Fatalf("Canonical: %v", err)
		}
		// Byte for byte what the JCS library produces.
		if lib := libraryCanonical(t, v); !bytes.Equal(c, lib) {
			t.Fatalf("Canonical differs from jcs.Transform:\n%s\n%s", c, lib)
		}
		// Canonical bytes are a fixed point.
		v2, err := Decode(c)
		if err != nil {
			t.Fatalf("canonical output does not decode: %v\n%s", err, c)
		}
		c2, _ := Canonical(v2)
		if !bytes.Equal(c, c2) {
			t.Fatalf("not a fixed point:\n%s\n%s", c, c2)
		}
	})
}
