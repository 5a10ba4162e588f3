package change

import (
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

func openaiCall(id, name, args string) any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

func TestClassify(t *testing.T) {
	base := snapshot.Response{Fields: snapshot.Fields{Content: "The capital is Paris.", FinishReason: "stop", TokensUsed: 30, Model: "gpt-4o-mini-2024-07-18"}, LatencyMS: 400}
	with := func(f func(r *snapshot.Response)) snapshot.Response {
		r := base
		f(&r)
		return r
	}
	cases := []struct {
		name string
		old  snapshot.Response
		new  snapshot.Response
		want []Class
	}{
		{"equal", base, base, nil},
		{"text", base, with(func(r *snapshot.Response) { r.Content = "The capital is Lyon." }), []Class{Text}},
		{"whitespace", base, with(func(r *snapshot.Response) { r.Content = "  The capital  is\nParis.\n" }), []Class{Whitespace}},
		{"finish only", base, with(func(r *snapshot.Response) { r.FinishReason = "length" }), []Class{Finish}},
		{"finish and text", base, with(func(r *snapshot.Response) { r.FinishReason = "length"; r.Content = "The capital" }), []Class{Finish, Text}},
		{"finish and whitespace", base, with(func(r *snapshot.Response) { r.FinishReason = "length"; r.Content = "The capital is Paris. " }), []Class{Finish, Whitespace}},
		{"structure also reports text",
			with(func(r *snapshot.Response) { r.Content = `{"city": "Paris", "country": "FR"}` }),
			with(func(r *snapshot.Response) { r.Content = `{"city": "Lyon", "country": "FR"}` }),
			[]Class{Structure, Text}},
		{"structure when only whitespace inside a JSON string changed",
			with(func(r *snapshot.Response) { r.Content = `{"a": "x  y"}` }),
			with(func(r *snapshot.Response) { r.Content = `{"a": "x y"}` }),
			[]Class{Structure, Text}},
		{"JSON reformatted is whitespace",
			with(func(r *snapshot.Response) { r.Content = "[1, 2]" }),
			with(func(r *snapshot.Response) { r.Content = "[1,\n 2]" }),
			[]Class{Whitespace}},
		{"JSON broke",
			with(func(r *snapshot.Response) { r.Content = `{"city": "Paris"}` }),
			with(func(r *snapshot.Response) { r.Content = `Sorry, I cannot answer in JSON.` }),
			[]Class{Structure, Text}},
		{"tool call arguments reordered are equal",
			with(func(r *snapshot.Response) {
				r.ToolCalls = []any{openaiCall("call_a", "weather", `{"city":"Paris","unit":"c"}`)}
			}),
			with(func(r *snapshot.Response) {
				r.ToolCalls = []any{openaiCall("call_b", "weather", `{ "unit": "c", "city": "Paris" }`)}
			}),
			nil},
		{"tool call argument changed",
			with(func(r *snapshot.Response) { r.ToolCalls = []any{openaiCall("call_a", "weather", `{"city":"Paris"}`)} }),
			with(func(r *snapshot.Response) { r.ToolCalls = []any{openaiCall("call_a", "weather", `{"city":"Lyon"}`)} }),
			[]Class{ToolCalls}},
		{"tool call renamed, Anthropic",
			with(func(r *snapshot.Response) {
				r.ToolCalls = []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": map[string]any{"city": "Paris"}}}
			}),
			with(func(r *snapshot.Response) {
				r.ToolCalls = []any{map[string]any{"type": "tool_use", "id": "toolu_2", "name": "forecast", "input": map[string]any{"city": "Paris"}}}
			}),
			[]Class{ToolCalls}},
		{"Gemini thoughtSignature ignored",
			with(func(r *snapshot.Response) {
				r.ToolCalls = []any{map[string]any{"functionCall": map[string]any{"name": "f", "args": map[string]any{"x": "1"}}, "thoughtSignature": "AAA"}}
			}),
			with(func(r *snapshot.Response) {
				r.ToolCalls = []any{map[string]any{"functionCall": map[string]any{"name": "f", "args": map[string]any{"x": "1"}}, "thoughtSignature": "BBB"}}
			}),
			nil},
		{"tool call added, content emptied", base,
			with(func(r *snapshot.Response) {
				r.Content = ""
				r.FinishReason = "tool_calls"
				r.ToolCalls = []any{openaiCall("c", "weather", `{}`)}
			}),
			[]Class{ToolCalls, Finish, Text}},
		{"model, tokens and latency are never classes", base,
			with(func(r *snapshot.Response) { r.Model = "gpt-4o-mini-2025-01-01"; r.TokensUsed = 31; r.LatencyMS = 1 }), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.old, tc.new)
			if !reflect.DeepEqual(got.Classes, tc.want) {
				t.Fatalf("classes = %v, want %v", got.Classes, tc.want)
			}
		})
	}
}

func TestClassifyDeltas(t *testing.T) {
	a := snapshot.Response{Fields: snapshot.Fields{Content: "x", FinishReason: "stop", TokensUsed: 30, Model: "m1"}, LatencyMS: 400}
	b := snapshot.Response{Fields: snapshot.Fields{Content: "x", FinishReason: "stop", TokensUsed: 42, Model: "m2"}, LatencyMS: 250}
	r := Classify(a, b)
	if r.Model == nil || *r.Model != (StringChange{"m1", "m2"}) {
		t.Errorf("model = %+v", r.Model)
	}
	if r.TokensUsed == nil || r.TokensUsed.Delta() != 12 || r.LatencyMS == nil || r.LatencyMS.Delta() != -150 {
		t.Errorf("tokens %+v latency %+v", r.TokensUsed, r.LatencyMS)
	}
	if !r.Changed() || len(r.Classes) != 0 || r.Content != nil || r.FinishReason != nil || r.ToolCalls != nil {
		t.Errorf("result = %+v", r)
	}
	if Classify(a, a).Changed() {
		t.Error("equal answers reported as changed")
	}
}

func TestFailing(t *testing.T) {
	r := Result{Classes: []Class{Finish, Whitespace}}
	if got := r.Failing(DefaultFailOn()); !reflect.DeepEqual(got, []Class{Finish}) {
		t.Errorf("default fail_on: %v", got)
	}
	if got := r.Failing(nil); got != nil {
		t.Errorf("empty fail_on: %v", got)
	}
	if got := r.Failing(All); !reflect.DeepEqual(got, []Class{Finish, Whitespace}) {
		t.Errorf("all: %v", got)
	}
}

func TestParseClass(t *testing.T) {
	for _, c := range All {
		if got, err := ParseClass(string(c)); err != nil || got != c {
			t.Errorf("%s: %v %v", c, got, err)
		}
	}
	_, err := ParseClass("model")
	if err == nil || !strings.Contains(err.Error(), `"model" is not a change class (allowed: tool-calls, structure, finish, text, whitespace)`) {
		t.Errorf("err = %v", err)
	}
}

func TestWords(t *testing.T) {
	cases := []struct {
		old, new string
		want     []Span
	}{
		{"", "", nil},
		{"same text", "same text", []Span{{Equal, "same text"}}},
		{"The answer is four.", "The answer is five.", []Span{{Equal, "The answer is "}, {Delete, "four"}, {Insert, "five"}, {Equal, "."}}},
		{"a quick brown fox", "a slow red fox", []Span{{Equal, "a "}, {Delete, "quick brown"}, {Insert, "slow red"}, {Equal, " fox"}}},
		{"Paris", "Paris, France", []Span{{Equal, "Paris"}, {Insert, ", France"}}},
		{"héllo wörld", "héllo wêrld", []Span{{Equal, "héllo "}, {Delete, "wörld"}, {Insert, "wêrld"}}},
	}
	for _, tc := range cases {
		got := Words(tc.old, tc.new)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Words(%q, %q) = %+v, want %+v", tc.old, tc.new, got, tc.want)
		}
		if Side(got, false) != tc.old || Side(got, true) != tc.new {
			t.Errorf("Words(%q, %q): sides do not rebuild the texts", tc.old, tc.new)
		}
	}
}

func TestLines(t *testing.T) {
	old := "a\nb\nc\n"
	new := "a\nB\nc\nd"
	got := Lines(old, new)
	want := []Span{{Equal, "a\n"}, {Delete, "b\n"}, {Insert, "B\n"}, {Equal, "c\n"}, {Insert, "d"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Lines = %+v", got)
	}
	if Side(got, false) != old || Side(got, true) != new {
		t.Error("sides do not rebuild the texts")
	}
}

// Many distinct tokens keep their identity across the surrogate gap of the
// rune encoding.
func TestWordsManyTokens(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 60000; i++ {
		w := "w" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
		a.WriteString(w + " ")
		if i == 59000 {
			w = "CHANGED"
		}
		b.WriteString(w + " ")
	}
	got := Words(a.String(), b.String())
	if Side(got, false) != a.String() || Side(got, true) != b.String() {
		t.Fatal("sides do not rebuild the texts")
	}
	var del, ins []string
	for _, s := range got {
		switch s.Op {
		case Delete:
			del = append(del, s.Text)
		case Insert:
			ins = append(ins, s.Text)
		}
	}
	if !reflect.DeepEqual(ins, []string{"CHANGED"}) || len(del) != 1 {
		t.Errorf("del %q ins %q", del, ins)
	}
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}

func FuzzWords(f *testing.F) {
	f.Add("The answer is four.", "The answer is five.")
	f.Add("", "x")
	f.Add("{\"a\": 1}", "{\"a\":\n 2}")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := Words(a, b)
		if Side(got, false) != a || Side(got, true) != b {
			t.Fatalf("Words(%q, %q) = %+v does not rebuild the texts", a, b, got)
		}
		lines := Lines(a, b)
		if Side(lines, false) != a || Side(lines, true) != b {
			t.Fatalf("Lines(%q, %q) = %+v does not rebuild the texts", a, b, lines)
		}
	})
}
