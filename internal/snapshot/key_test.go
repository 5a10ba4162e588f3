package snapshot

import (
	"encoding/json"

	"bytes"
	"strings"
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

func TestRequestKeyNormalization(t *testing.T) {
	a := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"stream":true,"stream_options":{"include_usage":true},
	  "messages":[{"role":"user","content":"hi"},
	   {"role":"assistant","content":null,"tool_calls":[{"id":"call_AbC","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_XyZ","type":"function","function":{"name":"g","arguments":"{}"}}]},
	   {"role":"tool","tool_call_id":"call_XyZ","content":"2"},{"role":"tool","tool_call_id":"call_AbC","content":"1"}]}`)
	b := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,
	  "messages":[{"role":"user","content":"hi"},
	   {"role":"assistant","content":null,"tool_calls":[{"id":"call_111","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_222","type":"function","function":{"name":"g","arguments":"{}"}}]},
	   {"role":"tool","tool_call_id":"call_222","content":"2"},{"role":"tool","tool_call_id":"call_111","content":"1"}]}`)
	ka, _ := RequestKey("openai", a, nil)
	kb, _ := RequestKey("openai", b, nil)
	if ka != kb {
		t.Errorf("streaming flags and provider tool-call ids changed the key: %s vs %s", ka, kb)
	}
	// Swapping which result answers which call must change the key.
	c := mustDecode(t, strings.Replace(strings.Replace(strings.Replace(`{"model":"m","temperature":0,"seed":1,"max_tokens":5,
	  "messages":[{"role":"user","content":"hi"},
	   {"role":"assistant","content":null,"tool_calls":[{"id":"A","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"B","type":"function","function":{"name":"g","arguments":"{}"}}]},
	   {"role":"tool","tool_call_id":"A","content":"2"},{"role":"tool","tool_call_id":"B","content":"1"}]}`, "\n", "", -1), "\t", "", -1), "  ", "", -1))
	kc, _ := RequestKey("openai", c, nil)
	if kc == ka {
		t.Error("results swapped between calls must give a different key")
	}
	// Anthropic string content and system equal their one-text-block form.
	s := mustDecode(t, `{"model":"c","max_tokens":9,"temperature":0,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}]}`)
	bl := mustDecode(t, `{"model":"c","max_tokens":9,"temperature":0,"system":[{"type":"text","text":"be brief"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`)
	ks, _ := RequestKey("anthropic", s, nil)
	kbl, _ := RequestKey("anthropic", bl, nil)
	if ks != kbl {
		t.Error("anthropic string content must key like its one-block form")
	}
	kh, _ := RequestKey("anthropic", s, map[string]any{"anthropic-version": "2023-06-01"})
	if kh == ks {
		t.Error("request_headers must join the key")
	}
	// The input is not modified.
	if _, ok := a["stream"]; !ok {
		t.Error("RequestKey modified its input")
	}
}

func TestKeyObjectMatchesDocumentedExample(t *testing.T) {
	req := mustDecode(t, `{"model":"gpt-4-turbo","messages":[{"role":"user","content":"Hello"}],"temperature":0,"max_tokens":100,"seed":42}`)
	b, err := Canonical(KeyObject("openai", req, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"endpoint":"/v1/chat/completions","provider":"openai","request":{"max_tokens":100,"messages":[{"content":"Hello","role":"user"}],"model":"gpt-4-turbo","seed":42,"temperature":0}}`
	if string(b) != want {
		t.Errorf("key object = %s\nwant %s", b, want)
	}
	if Endpoint("openai", mustDecode(t, `{"prompt":"x"}`)) != "/v1/completions" {
		t.Error("prompt requests use /v1/completions")
	}
}

func TestNormalizeStored(t *testing.T) {
	r := mustDecode(t, `{"model":"m","stop":"END","seed":null,"top_p":null,"messages":[]}`)
	NormalizeStored("openai", r)
	if s, ok := r["stop"].([]any); !ok || len(s) != 1 || s[0] != "END" {
		t.Errorf("stop = %#v", r["stop"])
	}
	if _, ok := r["seed"]; ok {
		t.Error("null seed must become absent")
	}
	a := mustDecode(t, `{"stop":"x"}`)
	NormalizeStored("anthropic", a)
	if _, ok := a["stop"].(string); !ok {
		t.Error("anthropic has no stop field mapping")
	}
}

func TestLineage(t *testing.T) {
	first := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"messages":[{"role":"user","content":"a"}]}`)
	second := mustDecode(t, `{"model":"m","temperature":0,"seed":1,"max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`)
	if _, _, ok, _ := Lineage("openai", first, nil); ok {
		t.Error("first turn has no lineage")
	}
	parent, turn, ok, err := Lineage("openai", second, nil)
	k1, _ := RequestKey("openai", first, nil)
	if err != nil || !ok || parent != IDOf(k1) || turn != 2 {
		t.Errorf("lineage = %s %d %v %v, want %s 2", parent, turn, ok, err, IDOf(k1))
	}
}

func TestRecordAndFileHashes(t *testing.T) {
	req := mustDecode(t, `{"model":"gpt-4-turbo","messages":[{"role":"user","content":"Hello"}],"temperature":0,"max_tokens":100,"seed":42}`)
	rec, key, err := NewRecord("openai", time.Date(2026, 1, 9, 10, 30, 0, 0, time.UTC), source.Source{File: "src/a.py", Line: 12, Function: "f"}, req, nil,
		Response{Fields: Fields{Content: "Hi", TokensUsed: 10, FinishReason: "stop"}, LatencyMS: 450})
	if err != nil {
		t.Fatal(err)
	}
	if rec["id"] != IDOf(key) {
		t.Fatal("id is the key prefix")
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
	if !bytes.HasPrefix(data, []byte("{\n  \"version\": \"1.0.0\",\n  \"snapshots\": [\n    {\n      \"id\":")) {
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
