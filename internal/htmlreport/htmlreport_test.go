package htmlreport

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/htmlreport/htmltest"
)

func samplePage() *Page {
	return &Page{
		Title:    "traceforge diff",
		Subtitle: "HEAD → work tree · .ai-snapshots",
		Summary:  []Count{{"failing", 1, Fail}, {"changed", 2, Warn}, {"added", 1, Info}, {"removed", 1, Neutral}, {"unchanged", 4, Pass}},
		Rows: []Row{
			{ID: "r1", Title: ".ai-snapshots/openai/aaaaaaaaaaaa.json", Verdict: "fails", Tone: Fail, Open: true,
				Tags:  []Tag{{"text", Fail}, {"finish", Fail}},
				Facts: []Fact{{"source", "app/main.go:42:main.ask"}, {"finish", "stop → length"}, {"tokens", "30 → 42 (+12)"}},
				Diffs: []Diff{{Title: "answer", OldLabel: "HEAD", NewLabel: "work tree",
					Old: "The meeting is on Friday at 10.\nBring the slides.\n",
					New: "The meeting is on Thursday at 10.\nBring the slides.\nAnd coffee.\n"}}},
			{ID: "r2", Title: ".ai-snapshots/openai/bbbbbbbbbbbb.json", Verdict: "changed", Tone: Warn,
				Tags:  []Tag{{"whitespace", Neutral}},
				Diffs: []Diff{{Title: "answer", OldLabel: "HEAD", NewLabel: "work tree", Old: "Hi there!", New: "Hi  there!"}}},
			{ID: "r3", Title: ".ai-snapshots/anthropic/cccccccccccc.json", Verdict: "added", Tone: Info,
				Diffs: []Diff{{Title: "answer", OldLabel: "HEAD", NewLabel: "work tree", New: "</script><script>alert(1)</script> <img src=x onerror=alert(2)>"}}},
			{ID: "r4", Title: ".ai-snapshots/openai/dddddddddddd.json", Verdict: "removed", Tone: Neutral,
				Diffs: []Diff{{Title: "answer", OldLabel: "HEAD", NewLabel: "work tree", Old: "Gone."}}},
		},
		Footer: []string{"fail_on: tool-calls, structure, finish, text"},
	}
}

func render(t *testing.T, p *Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Nothing is loaded from outside the file, and the CSP forbids it anyway.
func TestSelfContained(t *testing.T) {
	page := render(t, samplePage())
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`) {
		t.Error("no Content-Security-Policy")
	}
	for _, re := range []string{`(?i)<script[^>]*\ssrc=`, `(?i)<link\b`, `(?i)<img\b`, `(?i)@import`, `(?i)url\(`, `(?i)<iframe`, `(?i)\bhref="(?:https?:)?//`} {
		if loc := regexp.MustCompile(re).FindStringIndex(page); loc != nil {
			t.Errorf("external reference %q: %q", re, page[max(0, loc[0]-40):min(len(page), loc[1]+40)])
		}
	}
	// Content from snapshots is escaped, never markup.
	if !strings.Contains(page, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;") {
		t.Error("snapshot text not escaped")
	}
	if n := strings.Count(page, "<script>"); n != 1 {
		t.Errorf("%d script elements, want 1", n)
	}
}

func TestSideBySide(t *testing.T) {
	var old, new strings.Builder
	for i := 1; i <= 20; i++ {
		line := "line " + string(rune('a'+i-1)) + "\n"
		old.WriteString(line)
		if i == 10 {
			line = "line J changed\n"
		}
		new.WriteString(line)
	}
	new.WriteString("extra\n")
	got := sideBySide(Diff{Old: old.String(), New: new.String()})
	var kinds []string
	for _, l := range got {
		kinds = append(kinds, l.Kind)
	}
	want := []string{"gap", "eq", "eq", "eq", "chg", "eq", "eq", "eq", "gap", "eq", "eq", "eq", "ins"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	if got[0].Skipped != 6 || got[8].Skipped != 4 {
		t.Errorf("gaps = %d, %d", got[0].Skipped, got[8].Skipped)
	}
	chg := got[4]
	if chg.OldNo != 10 || chg.NewNo != 10 || !reflect.DeepEqual(chg.Old, []Seg{{"line ", false}, {"j", true}}) || !reflect.DeepEqual(chg.New, []Seg{{"line ", false}, {"J changed", true}}) {
		t.Errorf("changed line = %+v", chg)
	}
	if ins := got[12]; ins.OldNo != 0 || ins.NewNo != 21 || !reflect.DeepEqual(ins.New, []Seg{{"extra", true}}) {
		t.Errorf("inserted line = %+v", ins)
	}
	// One side empty (an added snapshot): every line is an insertion.
	for _, l := range sideBySide(Diff{New: "a\nb"}) {
		if l.Kind != "ins" {
			t.Errorf("added text: %+v", l)
		}
	}
}

// The page in a real browser: the script runs, the #verdict= filter hides
// the other rows, the diffs are there; screenshots at desktop and phone
// widths are saved for a person to look at.
func TestInChromium(t *testing.T) {
	bin := htmltest.Chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(render(t, samplePage())), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := htmltest.DOM(t, bin, file, "#verdict=fails")
	if !strings.Contains(dom, `data-filter="fails"`) || !strings.Contains(dom, `data-shown="1"`) {
		t.Fatalf("the filter script did not run:\n%s", dom)
	}
	rowRE := regexp.MustCompile(`<details class="row[^"]*" id="(r\d)" data-verdict="([a-z]+)"([^>]*)>`)
	rows := rowRE.FindAllStringSubmatch(dom, -1)
	if len(rows) != 4 {
		t.Fatalf("%d rows in the DOM, want 4", len(rows))
	}
	for _, r := range rows {
		hidden := strings.Contains(r[3], "hidden")
		if hidden != (r[2] != "fails") {
			t.Errorf("row %s (%s): hidden=%v", r[1], r[2], hidden)
		}
	}
	if !strings.Contains(dom, `<button type="button" data-filter="fails" aria-pressed="true">`) {
		t.Error("the fails filter button is not pressed")
	}
	for _, want := range []string{"<del>Friday</del>", "<ins>Thursday</ins>", "<ins>And coffee.</ins>", `<span class="n">4</span> unchanged`} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, "<script>alert") || strings.Contains(dom, `<img src="x"`) {
		t.Error("snapshot text became markup")
	}

	htmltest.Screenshots(t, bin, file, "diff")
}
