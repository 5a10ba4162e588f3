package render

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/htmlreport/htmltest"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// replayReport is a replay run: a static error, a passing snapshot, an
// unused one, a synthesized one, and a miss with its closest snapshot (the
// request carries a key, which must never reach the page).
func replayReport() *result.VerifyReport {
	code := 0
	return &result.VerifyReport{
		Dir: ".ai-snapshots", Mode: "replay", Command: "go test ./...", ExitCode: &code, FailOnUnused: true,
		Checked: []string{".ai-snapshots/openai/aaaaaaaaaaaa.json", ".ai-snapshots/openai/bbbbbbbbbbbb.json", ".ai-snapshots/anthropic/cccccccccccc.json", ".ai-snapshots/openai/dddddddddddd.json"},
		Findings: finding.Findings{{File: "openai/aaaaaaaaaaaa.json", Pointer: "/request/temperature", Rule: "determinism",
			Message: "temperature is 0.7, not 0", Fix: "record with temperature 0", Severity: finding.Error}},
		Replayed: result.Replayed{
			Served:      5,
			Unused:      []string{".ai-snapshots/anthropic/cccccccccccc.json"},
			Synthesized: []string{".ai-snapshots/openai/dddddddddddd.json"},
			Misses: []result.Miss{{Provider: "openai", Endpoint: "/v1/chat/completions", Key: strings.Repeat("e", 64), Source: "app/main.go:42:main.ask", Count: 2,
				Closest: ".ai-snapshots/openai/bbbbbbbbbbbb.json",
				Diff:    "--- .ai-snapshots/openai/bbbbbbbbbbbb.json\n+++ request\n@@ -1,5 +1,5 @@\n {\n   \"messages\": [\n-    {\"role\": \"user\", \"content\": \"When is the meeting?\"}\n+    {\"role\": \"user\", \"content\": \"When is the meeting? " + openaiKey + "\"}\n   ],\n   \"model\": \"gpt-4o-mini\"\n@@ -20,3 +20,3 @@\n   \"seed\": 7,\n-  \"temperature\": 0\n+  \"temperature\": 0.2\n }\n"}},
		},
	}
}

// liveReport is a live run: a drift in a fail_on class (text), a
// whitespace-only change that passes, and a tool-call change.
func liveReport() *result.VerifyReport {
	ws := change.Classify(snapshot.Response{Fields: snapshot.Fields{Content: "The meeting is on Friday."}},
		snapshot.Response{Fields: snapshot.Fields{Content: "The meeting is on Friday.\n"}})
	text := change.Classify(snapshot.Response{Fields: snapshot.Fields{Content: "The meeting is on Friday at 10.\nBring the slides.", Model: "gpt-4o-mini"}},
		snapshot.Response{Fields: snapshot.Fields{Content: "The meeting is on Thursday at 10.\nBring the slides.", Model: "gpt-4o-mini-2026"}})
	tools := change.Classify(
		snapshot.Response{Fields: snapshot.Fields{FinishReason: "tool_calls", ToolCalls: []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}}},
		snapshot.Response{Fields: snapshot.Fields{FinishReason: "tool_calls", ToolCalls: []any{map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Rome"}`}}}}})
	totals := ledger.NewTotals(nil)
	totals.Add("openai", "/v1/chat/completions", "gpt-4o-mini", snapshot.Response{Fields: snapshot.Fields{TokensUsed: 30, Usage: map[string]any{"prompt_tokens": 20.0, "completion_tokens": 10.0, "total_tokens": 30.0}}, LatencyMS: 400})
	sum := totals.Summary()
	return &result.VerifyReport{
		Dir: ".ai-snapshots", Mode: "live", LiveRuns: 2, Upstreams: []string{"openai: https://api.openai.com/v1"},
		FailOn:  change.DefaultFailOn(),
		Totals:  &sum,
		Checked: []string{".ai-snapshots/openai/aaaaaaaaaaaa.json", ".ai-snapshots/openai/bbbbbbbbbbbb.json", ".ai-snapshots/openai/cccccccccccc.json", ".ai-snapshots/openai/dddddddddddd.json"},
		Live: []result.LiveResult{
			{File: ".ai-snapshots/openai/aaaaaaaaaaaa.json", Runs: 2, Succeeded: 2, Different: 2, Drift: true, Failed: true,
				Message: "❌ Drift detected\n   2/2 runs agree with each other but differ from the recording\n   → CI fails",
				Classes: text.Classes, FailingClasses: text.Failing(change.DefaultFailOn()), Change: &text,
				Changes: []string{`content: "The meeting is on Friday at 10." → "The meeting is on Thursday at 10."`},
				Notes:   []string{`likely cause: the served model changed ("gpt-4o-mini" → "gpt-4o-mini-2026")`}},
			{File: ".ai-snapshots/openai/bbbbbbbbbbbb.json", Runs: 2, Succeeded: 2, Classes: ws.Classes, Change: &ws,
				Notes: []string{"2/2 runs differ from the recording only in whitespace (not in fail_on): passes"}},
			{File: ".ai-snapshots/openai/cccccccccccc.json", Runs: 2, Succeeded: 2, Different: 2, Drift: true, Failed: true,
				Message: "❌ Drift detected\n   2/2 runs agree with each other but differ from the recording\n   → CI fails",
				Classes: tools.Classes, FailingClasses: tools.Failing(change.DefaultFailOn()), Change: &tools},
			{File: ".ai-snapshots/openai/dddddddddddd.json", Runs: 2, Succeeded: 2},
		},
	}
}

func writeHTML(t *testing.T, rep *result.VerifyReport) string {
	t.Helper()
	var b bytes.Buffer
	if err := Verify(&b, rep, "html", false); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var rowRE = regexp.MustCompile(`<details class="row[^"]*" id="([a-z0-9-]+)" data-verdict="([a-z]+)"([^>]*)>\s*<summary><span class="verdict[^"]*">[a-z]+</span> <span class="title">([^<]*)</span>((?:\s*<span class="tag[^"]*">[^<]*</span>)*)`)

type htmlRow struct{ id, verdict, attrs, title, tags string }

func rows(page string) []htmlRow {
	var out []htmlRow
	for _, m := range rowRE.FindAllStringSubmatch(page, -1) {
		out = append(out, htmlRow{m[1], m[2], m[3], m[4], m[5]})
	}
	return out
}

// The page without a browser: verdicts per snapshot, failures first,
// redaction, and nothing external.
func TestVerifyHTML(t *testing.T) {
	page := writeHTML(t, replayReport())
	if strings.Contains(page, "T3BlbkFJ") || !strings.Contains(page, "[REDACTED:openai-api-key]") {
		t.Error("the key in the miss diff reached the page")
	}
	for _, re := range []string{`(?i)<script[^>]*\ssrc=`, `(?i)<link\b`, `(?i)<img\b`, `(?i)url\(`} {
		if regexp.MustCompile(re).MatchString(page) {
			t.Errorf("external reference %s", re)
		}
	}
	got := rows(page)
	want := []struct{ title, verdict, tag string }{
		{".ai-snapshots/openai/aaaaaaaaaaaa.json", VerdictFailed, "determinism"},
		{"unmatched openai request /v1/chat/completions (id eeeeeeeeeeee)", VerdictUnmatched, "drift"},
		{".ai-snapshots/anthropic/cccccccccccc.json", VerdictUnused, ""},
		{".ai-snapshots/openai/dddddddddddd.json", VerdictNote, ""},
		{".ai-snapshots/openai/bbbbbbbbbbbb.json", VerdictOK, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d:\n%+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].title != w.title || got[i].verdict != w.verdict || (w.tag != "" && !strings.Contains(got[i].tags, ">"+w.tag+"<")) {
			t.Errorf("row %d = %+v, want %+v", i, got[i], w)
		}
	}
	for _, s := range []string{
		"<dt>replay</dt><dd>never requested (fails: --fail-on-unused)</dd>", "<dt>replay</dt><dd>requested</dd>",
		`<details class="row tone-fail" id="s--ai-snapshots-anthropic-cccccccccccc-json" data-verdict="unused" open>`,
		`<span class="n">1</span> unused`,
		"<dt>replay</dt><dd>reply synthesized (the snapshot has no stored body)</dd>",
		"<dt>determinism</dt><dd>/request/temperature: temperature is 0.7, not 0 — fix: record with temperature 0</dd>",
		"<dt>from</dt><dd>app/main.go:42:main.ask</dd>", "<dt>requested</dt><dd>2 times</dd>",
		`<span class="n">5</span> requests replayed`,
		"FAIL 1 problem(s) in 1 file(s), 1 unmatched request(s), 1 unused snapshot(s)",
	} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func TestVerifyHTMLLive(t *testing.T) {
	page := writeHTML(t, liveReport())
	got := rows(page)
	if len(got) != 4 || got[0].verdict != VerdictFailed || got[1].verdict != VerdictFailed || got[2].verdict != VerdictNote || got[3].verdict != VerdictOK {
		t.Fatalf("rows %+v", got)
	}
	// The failing classes are tagged as failing, the others plainly.
	if !strings.Contains(got[0].tags, `<span class="tag tone-fail">text</span>`) || !strings.Contains(got[1].tags, `<span class="tag tone-fail">tool-calls</span>`) ||
		!strings.Contains(got[2].tags, `<span class="tag tone-neutral">whitespace</span>`) {
		t.Errorf("class tags: %+v", got)
	}
	if strings.Contains(page, "</span> unmatched</li>") || strings.Contains(page, "</span> unused</li>") {
		t.Error("a live page counts replay verdicts")
	}
	for _, s := range []string{"fail_on: tool-calls, structure, finish, text", "totals: 1 call, 30 tokens (20 in, 10 out), latency p50 400ms p95 400ms",
		"<dt>classes</dt><dd>text (failing: text)</dd>", "Drift: 2/2 live runs differ from the recording (text)"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

// An empty fail_on is spelled "none" in the text and the page.
func TestLiveFailOnNone(t *testing.T) {
	rep := liveReport()
	rep.FailOn = []change.Class{}
	var text bytes.Buffer
	if err := Verify(&text, rep, "text", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "live: 2 run(s) per snapshot against openai: https://api.openai.com/v1; fail_on: none\n") {
		t.Errorf("text:\n%s", text.String())
	}
	if page := writeHTML(t, rep); !strings.Contains(page, "<p>fail_on: none</p>") {
		t.Error("the page does not say fail_on: none")
	}
}

// Both pages in a real browser: the filter script runs, the side-by-side
// diffs are there; screenshots at desktop and phone width are written for
// a person to look at.
func TestVerifyHTMLInChromium(t *testing.T) {
	bin := htmltest.Chromium(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		rep    *result.VerifyReport
		filter string
		shown  int
		want   []string
	}{
		{"verify-replay", replayReport(), VerdictUnmatched, 1, []string{
			`<h3>request against the closest snapshot</h3>`,
			`"When is the meeting?<ins> [REDACTED:openai-api-key]</ins>"}`,
			`<td class="old">  "temperature": 0</td>`, `<td class="new">  "temperature": 0<ins>.2</ins></td>`,
		}},
		{"verify-live", liveReport(), VerdictFailed, 2, []string{
			"The meeting is on <del>Friday</del> at 10.", "The meeting is on <ins>Thursday</ins> at 10.",
			`get_weather({"city":"<del>Paris</del>"})`, `get_weather({"city":"<ins>Rome</ins>"})`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(file, []byte(writeHTML(t, tc.rep)), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := htmltest.DOM(t, bin, file, "#verdict="+tc.filter)
			if !strings.Contains(dom, `data-filter="`+tc.filter+`"`) || !strings.Contains(dom, `data-shown="`+strconv.Itoa(tc.shown)+`"`) {
				t.Fatalf("the filter script did not run (or showed another count):\n%s", dom)
			}
			for _, r := range rows(dom) {
				if hidden := strings.Contains(r.attrs, "hidden"); hidden != (r.verdict != tc.filter) {
					t.Errorf("row %s (%s): hidden=%v under #verdict=%s", r.id, r.verdict, hidden, tc.filter)
				}
			}
			for _, s := range tc.want {
				if !strings.Contains(dom, s) {
					t.Errorf("DOM lacks %q", s)
				}
			}
			htmltest.Screenshots(t, bin, file, tc.name)
		})
	}
}
