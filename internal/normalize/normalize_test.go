package normalize

import (
	"errors"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

func mustSet(t *testing.T, cfg string) *Set {
	t.Helper()
	v, err := snapshot.Decode([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(v)
	if err != nil {
		t.Fatalf("Parse(%s): %v", cfg, err)
	}
	return s
}

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	v, err := snapshot.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func jcs(t *testing.T, v any) string {
	t.Helper()
	b, err := snapshot.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuiltins(t *testing.T) {
	cases := []struct {
		rule, in, want string
	}{
		{"uuid", "session 3F2504E0-4F89-11D3-9A0C-0305E82C3301 and 123e4567-e89b-12d3-a456-426614174000.", "session <uuid> and <uuid>."},
		{"uuid", "not-a-uuid 123e4567-e89b-12d3-a456", "not-a-uuid 123e4567-e89b-12d3-a456"},
		{"ulid", "req 01ARZ3NDEKTSV4RRFFQ69G5FAV done", "req <ulid> done"},
		{"ulid", "x01ARZ3NDEKTSV4RRFFQ69G5FAV", "x01ARZ3NDEKTSV4RRFFQ69G5FAV"}, // no word boundary
		{"ulid", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "81ARZ3NDEKTSV4RRFFQ69G5FAV"},   // first char above 7
		{"iso-datetime", "now 2026-01-09T10:30:00Z, then 2026-01-09 10:30, 2026-01-09T10:30:00.123+02:00!", "now <iso-datetime>, then <iso-datetime>, <iso-datetime>!"},
		{"iso-datetime", "2026-01-09T10:30:00+0200", "<iso-datetime>"},
		{"iso-datetime", "date only 2026-01-09", "date only 2026-01-09"},
		{"date", "today is 2026-01-09.", "today is <date>."},
		{"date", "x2026-01-09", "x2026-01-09"},
		{"unix-ms", "ts=1767954600000 and 767954600000 and 17679546000001", "ts=<unix-ms> and 767954600000 and 17679546000001"},
	}
	for _, tc := range cases {
		t.Run(tc.rule+"/"+tc.in, func(t *testing.T) {
			s := mustSet(t, `[{"rule":"`+tc.rule+`"}]`)
			out, applied := s.NormalizeKey(map[string]any{"prompt": tc.in})
			if got := out["prompt"]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if changed := tc.in != tc.want; changed != (len(applied) == 1 && applied[0] == tc.rule) {
				t.Errorf("applied = %v, changed = %v", applied, changed)
			}
		})
	}
}

// The patterns are exactly DESIGN §12.8's; docs/format.md copies them.
func TestBuiltinPatternsAreTheContract(t *testing.T) {
	want := map[string]string{
		"uuid":         `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
		"ulid":         `\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b`,
		"iso-datetime": `\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?`,
		"date":         `\b\d{4}-\d{2}-\d{2}\b`,
		"unix-ms":      `\b1\d{12}\b`,
	}
	for name, p := range want {
		if got, ok := BuiltinPattern(name); !ok || got != p {
			t.Errorf("%s: %q, want %q", name, got, p)
		}
	}
	if len(builtins) != len(want) {
		t.Errorf("%d built-ins, want %d", len(builtins), len(want))
	}
}

func TestStoredRequestNeverModified(t *testing.T) {
	s := mustSet(t, `[{"rule":"uuid"},{"rule":"drop","paths":["/user","/messages/0"]}]`)
	req := decode(t, `{"user":"u","messages":[{"role":"system","content":"id 123e4567-e89b-12d3-a456-426614174000"},{"role":"user","content":"hi"}]}`)
	before := jcs(t, req)
	out, applied := s.NormalizeKey(req)
	if jcs(t, req) != before {
		t.Fatalf("the request was modified: %s", jcs(t, req))
	}
	if got, want := jcs(t, out), `{"messages":[{"content":"hi","role":"user"}]}`; got != want {
		t.Errorf("key request %s, want %s", got, want)
	}
	if strings.Join(applied, ",") != "uuid,drop" {
		t.Errorf("applied %v", applied)
	}
}

func TestPaths(t *testing.T) {
	req := `{"model":"m","user":"2026-01-09","messages":[{"role":"user","content":"on 2026-01-09"},{"role":"user","content":[{"type":"text","text":"2026-01-10"}]}],"metadata":{"a":{"day":"2026-01-09"},"b":{"day":"2026-01-11"}},"n":20260109}`
	cases := []struct {
		name, cfg, want string
		applied         []string
	}{
		{"every string", `[{"rule":"date"}]`,
			`{"messages":[{"content":"on <date>","role":"user"},{"content":[{"text":"<date>","type":"text"}],"role":"user"}],"metadata":{"a":{"day":"<date>"},"b":{"day":"<date>"}},"model":"m","n":20260109,"user":"<date>"}`, []string{"date"}},
		{"subtree under a wildcard index", `[{"rule":"date","paths":["/messages/*/content"]}]`,
			`{"messages":[{"content":"on <date>","role":"user"},{"content":[{"text":"<date>","type":"text"}],"role":"user"}],"metadata":{"a":{"day":"2026-01-09"},"b":{"day":"2026-01-11"}},"model":"m","n":20260109,"user":"2026-01-09"}`, []string{"date"}},
		{"wildcard key", `[{"rule":"date","paths":["/metadata/*/day"]}]`,
			`{"messages":[{"content":"on 2026-01-09","role":"user"},{"content":[{"text":"2026-01-10"}],"role":"user"}],"metadata":{"a":{"day":"<date>"},"b":{"day":"<date>"}},"model":"m","n":20260109,"user":"2026-01-09"}`, []string{"date"}},
		{"missing path changes nothing", `[{"rule":"date","paths":["/nothing/*","/messages/7"]}]`, "", nil},
		{"drop array elements highest first", `[{"rule":"drop","paths":["/messages/0","/messages/1"]}]`,
			`{"messages":[],"metadata":{"a":{"day":"2026-01-09"},"b":{"day":"2026-01-11"}},"model":"m","n":20260109,"user":"2026-01-09"}`, []string{"drop"}},
		{"drop with wildcard", `[{"rule":"drop","paths":["/metadata/*/day","/user"]}]`,
			`{"messages":[{"content":"on 2026-01-09","role":"user"},{"content":[{"text":"2026-01-10","type":"text"}],"role":"user"}],"metadata":{"a":{},"b":{}},"model":"m","n":20260109}`, []string{"drop"}},
		{"numbers are never rewritten", `[{"rule":"regex","pattern":"2026","replace":"Y","paths":["/n"]}]`, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = jcs(t, decode(t, req))
			}
			out, applied := mustSet(t, tc.cfg).NormalizeKey(decode(t, req))
			// the "wildcard key" case keeps the text block's type; compare exactly.
			if tc.name == "wildcard key" {
				want = strings.Replace(want, `{"text":"2026-01-10"}`, `{"text":"2026-01-10","type":"text"}`, 1)
			}
			if got := jcs(t, out); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if strings.Join(applied, ",") != strings.Join(tc.applied, ",") {
				t.Errorf("applied %v, want %v", applied, tc.applied)
			}
		})
	}
}

func TestOverlappingRules(t *testing.T) {
	// iso-datetime first eats the date inside the timestamp; date then has
	// nothing left to change and is not listed.
	s := mustSet(t, `[{"rule":"iso-datetime"},{"rule":"date"}]`)
	out, applied := s.NormalizeKey(map[string]any{"prompt": "at 2026-01-09T10:30:00Z"})
	if out["prompt"] != "at <iso-datetime>" || strings.Join(applied, ",") != "iso-datetime" {
		t.Errorf("got %q %v", out["prompt"], applied)
	}
	// In the other order date rewrites the date part (a space follows it,
	// so \b matches), and iso-datetime no longer matches: config order.
	s = mustSet(t, `[{"rule":"date"},{"rule":"iso-datetime"}]`)
	out, applied = s.NormalizeKey(map[string]any{"prompt": "at 2026-01-09 10:30"})
	if out["prompt"] != "at <date> 10:30" || strings.Join(applied, ",") != "date" {
		t.Errorf("got %q %v", out["prompt"], applied)
	}
	// Overlapping paths of one rule rewrite a subtree once.
	s = mustSet(t, `[{"rule":"regex","pattern":"a","replace":"aa","paths":["/messages","/messages/0/content"]}]`)
	out, _ = s.NormalizeKey(decode(t, `{"messages":[{"content":"a"}]}`))
	if got := jcs(t, out); got != `{"messages":[{"content":"aa"}]}` {
		t.Errorf("overlapping paths: %s", got)
	}
	// Each rule applies to the previous one's result; names repeat once.
	s = mustSet(t, `[{"rule":"regex","name":"ticket","pattern":"T-(\\d+)","replace":"ticket ${1}"},{"rule":"regex","name":"num","pattern":"\\d+","replace":"N"},{"rule":"regex","name":"ticket","pattern":"ticket","replace":"TICKET"}]`)
	out, applied = s.NormalizeKey(map[string]any{"prompt": "T-42"})
	if out["prompt"] != "TICKET N" || strings.Join(applied, ",") != "ticket,num" {
		t.Errorf("got %q %v", out["prompt"], applied)
	}
}

func TestRulesProducingEqualKeys(t *testing.T) {
	s := mustSet(t, `[{"rule":"uuid"},{"rule":"iso-datetime"},{"rule":"drop","paths":["/user"]}]`)
	a, _ := s.NormalizeKey(decode(t, `{"user":"alice","prompt":"req 123e4567-e89b-12d3-a456-426614174000 at 2026-01-09T10:30:00Z"}`))
	b, _ := s.NormalizeKey(decode(t, `{"user":"bob","prompt":"req 00000000-0000-0000-0000-000000000000 at 2027-12-31 23:59"}`))
	if jcs(t, a) != jcs(t, b) {
		t.Errorf("volatile values still differ:\n%s\n%s", jcs(t, a), jcs(t, b))
	}
	c, _ := s.NormalizeKey(decode(t, `{"user":"bob","prompt":"other req 00000000-0000-0000-0000-000000000000 at 2027-12-31 23:59"}`))
	if jcs(t, a) == jcs(t, c) {
		t.Error("a real prompt change was normalized away")
	}
}

func TestRegexExpansion(t *testing.T) {
	s := mustSet(t, `[{"rule":"regex","pattern":"order (?P<n>\\d+)","replace":"order#${n} ${1}x"}]`)
	out, applied := s.NormalizeKey(map[string]any{"prompt": "order 17"})
	if out["prompt"] != "order#17 17x" || strings.Join(applied, ",") != "regex" {
		t.Errorf("got %q %v", out["prompt"], applied)
	}
}

func TestNoRules(t *testing.T) {
	req := map[string]any{"prompt": "2026-01-09"}
	for _, s := range []*Set{nil, {}} {
		out, applied := s.NormalizeKey(req)
		if out["prompt"] != "2026-01-09" || applied != nil {
			t.Errorf("got %v %v", out, applied)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ cfg, want string }{
		{`{}`, "/normalize: must be an array"},
		{`["uuid"]`, "/normalize/0: must be an object"},
		{`[{}]`, "/normalize/0/rule: is required"},
		{`[{"rule":"guid"}]`, `/normalize/0/rule: unknown rule "guid"`},
		{`[{"rule":"uuid"},{"rule":"regex","pattern":"(","replace":""}]`, "/normalize/1/pattern: bad regular expression"},
		{`[{"rule":"regex","replace":"x"}]`, "/normalize/0/pattern: a regex rule needs"},
		{`[{"rule":"regex","pattern":"x"}]`, "/normalize/0/replace: a regex rule needs"},
		{`[{"rule":"regex","pattern":"x","replace":"","name":"Bad Name"}]`, `/normalize/0/name: "Bad Name" is not a rule name`},
		{`[{"rule":"uuid","pattern":"x"}]`, `/normalize/0: unknown field "pattern" for rule "uuid"`},
		{`[{"rule":"drop"}]`, "/normalize/0/paths: a drop rule needs"},
		{`[{"rule":"drop","paths":[""]}]`, "/normalize/0/paths/0: drop cannot remove the whole request"},
		{`[{"rule":"date","paths":["messages"]}]`, `/normalize/0/paths/0: bad JSON pointer "messages"`},
		{`[{"rule":"date","paths":["/a~2"]}]`, `/normalize/0/paths/0: bad JSON pointer "/a~2"`},
		{`[{"rule":"date","paths":[]}]`, "/normalize/0/paths: must be a non-empty array"},
		{`[{"rule":"date","paths":[3]}]`, `/normalize/0/paths/0: must be a JSON pointer string`},
	}
	for _, tc := range cases {
		v, err := snapshot.Decode([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(v)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestParsePointerEscapes(t *testing.T) {
	p, err := ParsePointer("/a~1b/~0c/*")
	if err != nil || strings.Join(p, "|") != "a/b|~c|*" {
		t.Errorf("got %q %v", p, err)
	}
}
