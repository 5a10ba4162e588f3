package htmlreport

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
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

// chromium returns the browser's path; the test needs it (skips only when
// it is not installed: apt-get install -y chromium).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); the HTML report is not checked in a browser")
	return ""
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// The page in a real browser: the script runs, the #verdict= filter hides
// the other rows, the diffs are there; screenshots at desktop and phone
// widths are saved for a person to look at.
func TestInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(render(t, samplePage())), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(runChromium(t, bin, "--dump-dom", "file://"+file+"#verdict=fails"))
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

	shots := os.Getenv("TRACEFORGE_SCREENSHOT_DIR")
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "traceforge-html-screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		png := filepath.Join(shots, "diff-"+size.name+".png")
		runChromium(t, bin, "--hide-scrollbars", "--window-size="+itoa(size.w)+","+itoa(size.h), "--screenshot="+png, "file://"+file)
		f, err := os.Open(png)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pngConfig(f)
		f.Close()
		if err != nil || cfg[0] != size.w {
			t.Errorf("%s screenshot: %v width %v", size.name, err, cfg)
		}
		t.Logf("screenshot: %s", png)
	}
}

func pngConfig(f *os.File) ([2]int, error) {
	c, err := png.DecodeConfig(f)
	return [2]int{c.Width, c.Height}, err
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}
