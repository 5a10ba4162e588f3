package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
)

var (
	openaiKey    = "sk-proj-" + strings.Repeat("A", 74) + "T3BlbkFJ" + strings.Repeat("B", 74)
	anthropicKey = "sk-ant-api03-" + strings.Repeat("x", 93) + "AA"
	bearer       = "Bearer " + strings.Repeat("t", 30)
)

func redacted(t *testing.T, in string) string {
	t.Helper()
	var b bytes.Buffer
	rw := NewRedactor(&b)
	// Written in small pieces: a key split over writes is still caught.
	for i := 0; i < len(in); i += 7 {
		end := min(i+7, len(in))
		if _, err := rw.Write([]byte(in[i:end])); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("wrote %q before Flush", b.String())
	}
	if err := rw.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRedactorPlainText(t *testing.T) {
	in := "key " + openaiKey + " and " + anthropicKey + "\n" + bearer + " end\n"
	want := "key [REDACTED:openai-api-key] and [REDACTED:anthropic-api-key]\n[REDACTED:bearer-token] end\n"
	if got := redacted(t, in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// html/template writes + as &#43;: a bearer token in an HTML page.
	if got := redacted(t, "<dd>Bearer abcdefghij&#43;klmnopqrstuvwxyz</dd>"); got != "<dd>[REDACTED:bearer-token]</dd>" {
		t.Errorf("HTML-escaped bearer: %q", got)
	}
	if got := redacted(t, "nothing secret: sk-short, bearer x\n"); got != "nothing secret: sk-short, bearer x\n" {
		t.Errorf("ordinary text changed: %q", got)
	}
}

// A key right after a format's escape (JSON \n, GitHub %0A, XML &#xA;) has
// no word boundary in the escaped bytes; it is redacted all the same.
func TestRedactorSeesThroughEscapes(t *testing.T) {
	js, _ := json.Marshal(map[string]string{"m": "line one\n" + anthropicKey + "\t" + openaiKey})
	for name, in := range map[string]string{
		"json":   string(js),
		"github": "::error file=a::x%0A" + anthropicKey + "%0D" + openaiKey,
		"xml":    `<failure message="x&#xA;` + anthropicKey + `&#x9;` + openaiKey + `"/>`,
		"\\u":    `"\u0073` + anthropicKey[1:] + `\u0020` + openaiKey + `"`,
	} {
		got := redacted(t, in)
		if strings.Contains(got, "sk-ant-api03") || strings.Contains(got, "T3BlbkFJ") ||
			!strings.Contains(got, "[REDACTED:anthropic-api-key]") || !strings.Contains(got, "[REDACTED:openai-api-key]") {
			t.Errorf("%s: %s", name, got)
		}
	}
	// The escapes around a key are kept, so the format stays valid.
	var back map[string]string
	if err := json.Unmarshal([]byte(redacted(t, string(js))), &back); err != nil || back["m"] != "line one\n[REDACTED:anthropic-api-key]\t[REDACTED:openai-api-key]" {
		t.Errorf("redacted JSON = %v (%v)", back, err)
	}
}

func TestLineRedactorWritesEachLine(t *testing.T) {
	var b bytes.Buffer
	rw := NewLineRedactor(&b)
	_, _ = rw.Write([]byte("first " + bearer))
	if b.Len() != 0 {
		t.Fatalf("incomplete line written: %q", b.String())
	}
	_, _ = rw.Write([]byte(" x\nsecond"))
	if b.String() != "first [REDACTED:bearer-token] x\n" {
		t.Fatalf("after one line: %q", b.String())
	}
	_ = rw.Flush()
	if b.String() != "first [REDACTED:bearer-token] x\nsecond" {
		t.Errorf("after Flush: %q", b.String())
	}
}

// Findings carry paths relative to the snapshot folder; every renderer
// names them under it.
func TestRenderersNameFilesUnderTheFolder(t *testing.T) {
	f := finding.Finding{File: "openai/0123456789ab.json", Pointer: "/hash", Rule: "record-hash", Message: "mismatch " + bearer, Fix: "re-record"}
	var b bytes.Buffer
	if err := WriteFindingLines(&b, ".snaps", finding.Findings{f}); err != nil {
		t.Fatal(err)
	}
	if want := "❌ .snaps/openai/0123456789ab.json: /hash: mismatch [REDACTED:bearer-token] [record-hash]\n   → re-record\n"; b.String() != want {
		t.Errorf("finding lines:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	rep := &result.VerifyReport{Dir: ".snaps", Mode: "static", Checked: []string{".snaps/openai/0123456789ab.json"}, Findings: finding.Findings{f}}
	if err := Verify(&b, rep, "json", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"file": ".snaps/openai/0123456789ab.json"`) || rep.Findings[0].File != f.File {
		t.Errorf("json report (or the report was changed):\n%s", b.String())
	}
	if got := VerifySummary(rep); got != "FAIL 1 problem(s) in 1 file(s) (1 snapshot(s) checked)" {
		t.Errorf("summary line %q", got)
	}

	b.Reset()
	sum := &result.RecordSummary{Dir: ".snaps", Calls: 1, Refused: 1, Problems: finding.Findings{{File: "openai/0123456789ab.json",
		Rule: "write-failed", Subject: "POST /v1/chat/completions", ID: "0123456789ab", Count: 2, Outcome: result.OutcomeRefused, Message: "disk full", Fix: "free space"}}}
	RecordProblems(&b, sum)
	want := "❌ refused: POST /v1/chat/completions (id 0123456789ab) ×2\n   .snaps/openai/0123456789ab.json\n   disk full\n   → free space\n"
	if b.String() != want || !sum.Failed() {
		t.Errorf("record problems:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	RecordProblems(&b, &result.RecordSummary{ManifestError: errors.New("read-only")})
	if !strings.HasPrefix(b.String(), "❌ manifest not written: read-only\n") {
		t.Errorf("manifest error: %q", b.String())
	}

	b.Reset()
	_ = WriteMigrateProblems(&b, ".snaps", finding.Findings{{File: "snapshots.json", Pointer: "/snapshots/1", Subject: `#1 "a"`, Rule: "tampered", Message: "edited", Fix: "restore it"}})
	if want := "  .snaps/snapshots.json /snapshots/1 (#1 \"a\"): edited [tampered]\n      fix: restore it\n"; b.String() != want {
		t.Errorf("migrate problems:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestJUnitClassPerProvider: JUnit groups a snapshot's case under its
// provider folder, the native ones included; anything else is "set".
func TestJUnitClassPerProvider(t *testing.T) {
	for file, want := range map[string]string{
		".ai-snapshots/openai/0123456789ab.json": "openai",
		".ai-snapshots/gemini/0123456789ab.json": "gemini",
		".ai-snapshots/ollama/0123456789ab.json": "ollama",
		".ai-snapshots/manifest.json":            "set",
	} {
		if got := classOf(file); got != want {
			t.Errorf("classOf(%s) = %s, want %s", file, got, want)
		}
	}
}
