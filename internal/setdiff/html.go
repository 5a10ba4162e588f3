package setdiff

import (
	"fmt"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/htmlreport"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Verdicts of the HTML page's rows (its filters).
const (
	VerdictFails   = "fails"   // changed in a fail_on class
	VerdictChanged = "changed" // changed, in no fail_on class
)

// Page builds the HTML report page of r.
func (r *Report) Page() *htmlreport.Page {
	p := &htmlreport.Page{
		Title:    "traceforge diff",
		Subtitle: fmt.Sprintf("%s → %s · %s", r.From, r.To, r.Dir),
		Summary: []htmlreport.Count{
			{Label: "failing", N: len(r.Failing()), Tone: htmlreport.Fail},
			{Label: "changed", N: r.Count(Changed), Tone: htmlreport.Warn},
			{Label: "added", N: r.Count(Added), Tone: htmlreport.Info},
			{Label: "removed", N: r.Count(Removed), Tone: htmlreport.Neutral},
			{Label: "unchanged", N: r.Unchanged, Tone: htmlreport.Pass},
		},
		Footer: []string{"fail_on: " + orNone(change.Names(r.FailOn)), "Written by traceforge diff."},
	}
	if n := r.Count(Unreadable); n > 0 {
		p.Summary = append(p.Summary, htmlreport.Count{Label: "unreadable", N: n, Tone: htmlreport.Fail})
	}
	for i := range r.Items {
		p.Rows = append(p.Rows, r.row(&r.Items[i]))
	}
	return p
}

func (r *Report) writeHTML(w io.Writer) error { return htmlreport.Write(w, r.Page()) }

func (r *Report) row(it *Item) htmlreport.Row {
	row := htmlreport.Row{ID: "s-" + strings.NewReplacer("/", "-", ".", "-").Replace(it.File), Title: r.Dir + "/" + it.File}
	rec := it.Record()
	if rec != nil {
		row.Facts = append(row.Facts, htmlreport.Fact{Label: "source", Value: red(rec.Source.Display())}, htmlreport.Fact{Label: "model", Value: red(model(it))})
	}
	switch it.Status {
	case Changed:
		row.Verdict, row.Tone, row.Open = VerdictChanged, htmlreport.Warn, true
		if len(it.Failing) > 0 {
			row.Verdict, row.Tone, row.Open = VerdictFails, htmlreport.Fail, true
		}
		for _, c := range it.Change.Classes {
			tone := htmlreport.Neutral
			for _, f := range it.Failing {
				if f == c {
					tone = htmlreport.Fail
				}
			}
			row.Tags = append(row.Tags, htmlreport.Tag{Text: string(c), Tone: tone})
		}
		for _, f := range it.facts() {
			row.Facts = append(row.Facts, htmlreport.Fact{Label: f[0], Value: red(f[1])})
		}
		if c := it.Change.Content; c != nil {
			row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "answer", OldLabel: r.From, NewLabel: r.To, Old: red(c.From), New: red(c.To)})
		}
		if tc := it.Change.ToolCalls; tc != nil {
			row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "tool calls", OldLabel: r.From, NewLabel: r.To, Old: red(callLines(tc.From)), New: red(callLines(tc.To))})
		}
		if !sameJSON(it.Old.Request, it.New.Request) {
			row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "request", OldLabel: r.From, NewLabel: r.To, Old: red(pretty(it.Old.Request)), New: red(pretty(it.New.Request))})
		}
	case Added:
		row.Verdict, row.Tone = string(Added), htmlreport.Info
		for _, n := range it.Notes {
			row.Facts = append(row.Facts, htmlreport.Fact{Label: "note", Value: red(n)})
		}
		if old := it.Replaces; old != nil {
			row.Diffs = append(row.Diffs,
				htmlreport.Diff{Title: "request (replaced snapshot → this one)", OldLabel: old.ID, NewLabel: rec.ID, Old: red(pretty(old.Request)), New: red(pretty(rec.Request))},
				htmlreport.Diff{Title: "answer (replaced snapshot → this one)", OldLabel: old.ID, NewLabel: rec.ID, Old: red(old.Response.Content), New: red(rec.Response.Content)})
			break
		}
		row.Diffs = append(row.Diffs,
			htmlreport.Diff{Title: "answer", OldLabel: r.From, NewLabel: r.To, New: red(rec.Response.Content)},
			htmlreport.Diff{Title: "request", OldLabel: r.From, NewLabel: r.To, New: red(pretty(rec.Request))})
	case Removed:
		row.Verdict, row.Tone = string(Removed), htmlreport.Neutral
		for _, n := range it.Notes {
			row.Facts = append(row.Facts, htmlreport.Fact{Label: "note", Value: red(n)})
		}
		row.Diffs = append(row.Diffs,
			htmlreport.Diff{Title: "answer", OldLabel: r.From, NewLabel: r.To, Old: red(rec.Response.Content)},
			htmlreport.Diff{Title: "request", OldLabel: r.From, NewLabel: r.To, Old: red(pretty(rec.Request))})
	case Unreadable:
		row.Verdict, row.Tone, row.Open = string(Unreadable), htmlreport.Fail, true
		row.Facts = append(row.Facts, htmlreport.Fact{Label: "problem", Value: red(it.Problem)}, htmlreport.Fact{Label: "fix", Value: "run traceforge verify for the details"})
	}
	return row
}

func callLines(cs []change.ToolCall) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

func pretty(v any) string {
	b, err := snapshot.MarshalPretty(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
