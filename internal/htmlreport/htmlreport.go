// Package htmlreport writes a self-contained HTML report page: summary
// counts, one row per snapshot with its verdict, filters by verdict, and
// side-by-side diffs with word-level highlights. Nothing is loaded from
// outside the file: styles and script are inline, and a Content Security
// Policy forbids every external fetch (DESIGN §12.5, §12.8 "HTML").
//
// The page model is independent of where the verdicts come from:
// `traceforge diff --format html` fills it from a set comparison, and
// `verify --format html` can fill it from a verification report.
package htmlreport

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
)

// Tone colours a verdict, count or tag.
type Tone string

// Tones.
const (
	Neutral Tone = "neutral"
	Pass    Tone = "pass"
	Fail    Tone = "fail"
	Warn    Tone = "warn"
	Info    Tone = "info"
)

// Page is one report.
type Page struct {
	Title    string  // the <title> and heading
	Subtitle string  // e.g. "HEAD → work tree · .ai-snapshots"
	Summary  []Count // summary counts, in order
	Rows     []Row
	Footer   []string // lines under the rows (e.g. the fail_on classes)
}

// Count is one summary number.
type Count struct {
	Label string
	N     int
	Tone  Tone
}

// Row is one snapshot.
type Row struct {
	ID      string // unique within the page (an HTML id and link anchor)
	Title   string // e.g. the snapshot file
	Verdict string // the label shown and filtered on ("changed", "failed", …)
	Tone    Tone
	Tags    []Tag  // e.g. change classes
	Facts   []Fact // label/value lines
	Diffs   []Diff // side-by-side diffs
	Open    bool   // show the details expanded
}

// Tag is a small label on a row.
type Tag struct {
	Text string
	Tone Tone
}

// Fact is one label/value line of a row.
type Fact struct {
	Label, Value string
}

// Diff is a side-by-side comparison of two texts: lines are aligned, and
// changed lines paired left and right show their word-level differences.
// An empty side (an added or removed snapshot) shows only the other.
type Diff struct {
	Title              string
	OldLabel, NewLabel string
	Old, New           string
}

//go:embed page.css
var css string

//go:embed page.js
var js string

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"sideBySide": sideBySide,
}).Parse(pageTemplate))

// Write renders p as one HTML document.
func Write(w io.Writer, p *Page) error {
	verdicts := map[string]int{}
	var order []string
	for _, r := range p.Rows {
		if _, ok := verdicts[r.Verdict]; !ok {
			order = append(order, r.Verdict)
		}
		verdicts[r.Verdict]++
	}
	type filter struct {
		Verdict string
		N       int
	}
	var filters []filter
	for _, v := range order {
		filters = append(filters, filter{v, verdicts[v]})
	}
	return tmpl.Execute(w, map[string]any{
		"Page":    p,
		"Filters": filters,
		"CSS":     template.CSS(css),
		"JS":      template.JS(js),
	})
}

// Seg is a piece of one side of a diff line; Mark is set on changed words.
type Seg struct {
	Text string
	Mark bool
}

// Line is one row of a side-by-side diff. A zero line number is an absent
// side; Gap rows stand for Skipped unchanged lines.
type Line struct {
	Kind         string // "eq", "chg", "del", "ins", "gap"
	OldNo, NewNo int
	Old, New     []Seg
	Skipped      int
}

// context is the unchanged lines shown around a change.
const contextLines = 3

// sideBySide aligns two texts line by line.
func sideBySide(d Diff) []Line {
	var lines []Line
	on, nn := 1, 1
	var dels, inss []string
	flush := func() {
		for i := 0; i < len(dels) || i < len(inss); i++ {
			l := Line{Kind: "chg"}
			switch {
			case i < len(dels) && i < len(inss):
				words := change.Words(dels[i], inss[i])
				for _, s := range words {
					if s.Op != change.Insert {
						l.Old = append(l.Old, Seg{s.Text, s.Op == change.Delete})
					}
					if s.Op != change.Delete {
						l.New = append(l.New, Seg{s.Text, s.Op == change.Insert})
					}
				}
				l.OldNo, l.NewNo = on, nn
				on++
				nn++
			case i < len(dels):
				l.Kind, l.OldNo, l.Old = "del", on, []Seg{{dels[i], true}}
				on++
			default:
				l.Kind, l.NewNo, l.New = "ins", nn, []Seg{{inss[i], true}}
				nn++
			}
			lines = append(lines, l)
		}
		dels, inss = nil, nil
	}
	for _, s := range change.Lines(d.Old, d.New) {
		parts := splitLines(s.Text)
		switch s.Op {
		case change.Delete:
			dels = append(dels, parts...)
		case change.Insert:
			inss = append(inss, parts...)
		default:
			flush()
			for _, p := range parts {
				lines = append(lines, Line{Kind: "eq", OldNo: on, NewNo: nn, Old: []Seg{{p, false}}, New: []Seg{{p, false}}})
				on++
				nn++
			}
		}
	}
	flush()
	return collapse(lines)
}

// collapse replaces runs of unchanged lines far from any change by a gap.
func collapse(lines []Line) []Line {
	near := make([]bool, len(lines))
	for i, l := range lines {
		if l.Kind != "eq" {
			for j := max(0, i-contextLines); j <= min(len(lines)-1, i+contextLines); j++ {
				near[j] = true
			}
		}
	}
	var out []Line
	for i := 0; i < len(lines); {
		if near[i] || lines[i].Kind != "eq" {
			out = append(out, lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && !near[j] {
			j++
		}
		if j-i <= 1 {
			out = append(out, lines[i:j]...)
		} else {
			out = append(out, Line{Kind: "gap", Skipped: j - i})
		}
		i = j
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
