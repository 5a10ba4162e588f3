package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/htmlreport"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/secret"
)

// Verdicts of the verify HTML page's rows (its filters).
const (
	VerdictFailed    = "failed"    // a static error or a failed live result
	VerdictUnmatched = "unmatched" // a replay request that matched no snapshot (drift)
	VerdictUnused    = "unused"    // never requested during replay (a failure with --fail-on-unused)
	VerdictNote      = "note"      // passes, with something to read (policy, synthesized, a passing change)
	VerdictOK        = "ok"        // passes
)

// writeHTML renders the report as one self-contained page (DESIGN §12.5):
// summary counts, a row per snapshot with its verdict — static findings,
// replay (requested, never requested, synthesized), live results with
// their classes —, a row per unmatched request, and side-by-side diffs: a
// miss against its closest snapshot, a live answer against the recording.
// Every string taken from the report is redacted before it is laid out
// (word-level diff markup could split a key), and the page is written
// through the Redactor like every other format.
func (r report) writeHTML(w io.Writer) error { return htmlreport.Write(w, r.page()) }

// page builds the HTML page of the report (r's findings already named
// under the snapshot folder, as Write passes them).
func (r report) page() *htmlreport.Page {
	red := secret.Redact
	sub := []string{r.Dir, r.Mode}
	if r.Command != "" {
		sub = append(sub, "command: "+r.Command)
	}
	if r.Shard != "" {
		sub = append(sub, "shard "+r.Shard)
	}
	if len(r.Upstreams) > 0 {
		sub = append(sub, fmt.Sprintf("%d live run(s) per snapshot against %s", r.LiveRuns, strings.Join(r.Upstreams, ", ")))
	}
	p := &htmlreport.Page{Title: "traceforge verify", Subtitle: red(strings.Join(sub, " · "))}

	rows := r.snapshotRows()
	for i, m := range r.Misses {
		rows = append(rows, missRow(i, m))
	}
	for i, e := range r.ReplayErrors {
		rows = append(rows, htmlreport.Row{ID: fmt.Sprintf("e-%d", i+1), Title: "replay error", Verdict: VerdictFailed, Tone: htmlreport.Fail, Open: true,
			Facts: []htmlreport.Fact{{Label: "error", Value: red(e)}}})
	}
	for i, b := range r.Bypassed {
		rows = append(rows, htmlreport.Row{ID: fmt.Sprintf("b-%d", i+1), Title: red(bypassLine(b)), Verdict: VerdictFailed, Tone: htmlreport.Fail, Open: true,
			Tags:  []htmlreport.Tag{{Text: "bypass", Tone: htmlreport.Fail}},
			Facts: []htmlreport.Fact{{Label: "fix", Value: red(b.Hint)}}})
	}
	// Failures first, then the rest, each in file order.
	sort.SliceStable(rows, func(i, j int) bool { return order(rows[i].Verdict) < order(rows[j].Verdict) })
	p.Rows = rows

	counts := map[string]int{}
	for _, row := range rows {
		counts[row.Verdict]++
	}
	unusedTone := htmlreport.Warn
	if r.FailOnUnused {
		unusedTone = htmlreport.Fail
	}
	p.Summary = []htmlreport.Count{{Label: VerdictFailed, N: counts[VerdictFailed], Tone: htmlreport.Fail}}
	if r.Mode == "replay" || r.Mode == "serve" {
		p.Summary = append(p.Summary,
			htmlreport.Count{Label: VerdictUnmatched, N: counts[VerdictUnmatched], Tone: htmlreport.Fail},
			htmlreport.Count{Label: VerdictUnused, N: counts[VerdictUnused], Tone: unusedTone})
	}
	p.Summary = append(p.Summary,
		htmlreport.Count{Label: VerdictNote, N: counts[VerdictNote], Tone: htmlreport.Info},
		htmlreport.Count{Label: VerdictOK, N: counts[VerdictOK], Tone: htmlreport.Pass})
	if r.Mode == "replay" || r.Mode == "serve" {
		p.Summary = append(p.Summary, htmlreport.Count{Label: "requests replayed", N: r.Served, Tone: htmlreport.Neutral})
	}
	if r.Mode == "live" {
		p.Footer = append(p.Footer, "fail_on: "+classesOrNone(r.FailOn))
	}
	for _, e := range r.Exception {
		p.Footer = append(p.Footer, red("policy: "+e))
	}
	p.Footer = append(p.Footer, r.summary(style{}))
	if r.Totals != nil {
		p.Footer = append(p.Footer, TotalsLine(*r.Totals))
	}
	return p
}

func classesOrNone(cs []change.Class) string {
	if len(cs) == 0 {
		return "none"
	}
	return change.Names(cs)
}

// snapshotRows builds one row per snapshot file (and per other file with
// findings, such as the manifest), in file order.
func (r report) snapshotRows() []htmlreport.Row {
	ix := r.index()
	byFile, live, checked, unused, synth, files := ix.findings, ix.live, ix.checked, ix.unused, ix.synth, ix.files
	replay := r.Mode == "replay" || r.Mode == "serve"
	rows := make([]htmlreport.Row, 0, len(files))
	for _, file := range files {
		row := htmlreport.Row{ID: "s-" + rowID(file), Title: secret.Redact(file), Verdict: VerdictOK, Tone: htmlreport.Pass}
		worse := func(v string, t htmlreport.Tone) {
			if order(v) < order(row.Verdict) {
				row.Verdict, row.Tone = v, t
			}
		}
		for _, f := range byFile[file] {
			row.Facts = append(row.Facts, findingFact(f))
			if f.Severity == finding.Error {
				worse(VerdictFailed, htmlreport.Fail)
				row.Tags = append(row.Tags, htmlreport.Tag{Text: f.Rule, Tone: htmlreport.Fail})
			} else {
				worse(VerdictNote, htmlreport.Info)
			}
		}
		if replay && checked[file] && !unused[file] {
			row.Facts = append(row.Facts, htmlreport.Fact{Label: "replay", Value: "requested"})
		}
		if unused[file] {
			// With --fail-on-unused an unused snapshot fails the run: its
			// verdict stays "unused" (its own filter), coloured as a failure.
			tone, what := htmlreport.Warn, "never requested"
			if r.FailOnUnused {
				tone, what = htmlreport.Fail, "never requested (fails: --fail-on-unused)"
			}
			worse(VerdictUnused, tone)
			row.Facts = append(row.Facts, htmlreport.Fact{Label: "replay", Value: what})
		}
		if synth[file] {
			worse(VerdictNote, htmlreport.Info)
			row.Facts = append(row.Facts, htmlreport.Fact{Label: "replay", Value: "reply synthesized (the snapshot has no stored body)"})
		}
		if l, ok := live[file]; ok {
			addLive(&row, l, worse)
		}
		row.Open = row.Tone == htmlreport.Fail
		rows = append(rows, row)
	}
	return rows
}

// order ranks verdicts, worst first.
func order(v string) int {
	switch v {
	case VerdictFailed:
		return 0
	case VerdictUnmatched:
		return 1
	case VerdictUnused:
		return 2
	case VerdictNote:
		return 3
	}
	return 4
}

func findingFact(f finding.Finding) htmlreport.Fact {
	label := f.Rule
	if f.Severity == finding.Note {
		label = "note: " + label
	}
	return htmlreport.Fact{Label: label, Value: secret.Redact(findingText(f, " — fix: "))}
}

// addLive adds a live result to its snapshot's row: verdict, classes,
// runs, errors, notes, and the recorded-vs-live diffs of the shown run.
func addLive(row *htmlreport.Row, l result.LiveResult, worse func(string, htmlreport.Tone)) {
	red := secret.Redact
	failing := map[change.Class]bool{}
	for _, c := range l.FailingClasses {
		failing[c] = true
	}
	switch {
	case l.Failed:
		worse(VerdictFailed, htmlreport.Fail)
		row.Tags = append(row.Tags, htmlreport.Tag{Text: liveType(l), Tone: htmlreport.Fail})
	case len(l.Notes) > 0 || len(l.Errors) > 0 || l.ByPolicy:
		worse(VerdictNote, htmlreport.Info)
	}
	for _, c := range l.Classes {
		tone := htmlreport.Neutral
		if failing[c] {
			tone = htmlreport.Fail
		}
		row.Tags = append(row.Tags, htmlreport.Tag{Text: string(c), Tone: tone})
	}
	runs := fmt.Sprintf("%d/%d runs succeeded, %d differ from the recording in a failing way", l.Succeeded, l.Runs, l.Different)
	if l.Failed {
		runs = liveHeadline(l)
	}
	row.Facts = append(row.Facts, htmlreport.Fact{Label: "live", Value: red(runs)})
	if cl := classLine(l); cl != "" {
		row.Facts = append(row.Facts, htmlreport.Fact{Label: "classes", Value: strings.TrimPrefix(cl, "classes: ")})
	}
	for _, c := range l.Changes {
		row.Facts = append(row.Facts, htmlreport.Fact{Label: "change", Value: red(c)})
	}
	for _, e := range l.Errors {
		row.Facts = append(row.Facts, htmlreport.Fact{Label: "upstream error", Value: red(e)})
	}
	for _, n := range l.Notes {
		row.Facts = append(row.Facts, htmlreport.Fact{Label: "note", Value: red(n)})
	}
	c := l.Change
	switch {
	case c != nil && (c.Content != nil || c.ToolCalls != nil):
		if c.Content != nil {
			row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "answer", OldLabel: "recorded", NewLabel: "live", Old: red(c.Content.From), New: red(c.Content.To)})
		}
		if c.ToolCalls != nil {
			row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "tool calls", OldLabel: "recorded", NewLabel: "live", Old: red(toolCallLines(c.ToolCalls.From)), New: red(toolCallLines(c.ToolCalls.To))})
		}
	case l.Diff != "":
		old, new := diffSides(l.Diff)
		row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "compared fields", OldLabel: "recorded", NewLabel: "live", Old: red(old), New: red(new)})
	}
}

func toolCallLines(cs []change.ToolCall) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

// missRow is an unmatched replay request with the diff against its
// closest snapshot.
func missRow(i int, m result.Miss) htmlreport.Row {
	red := secret.Redact
	row := htmlreport.Row{ID: fmt.Sprintf("m-%d", i+1), Title: red(missTitle(m)), Verdict: VerdictUnmatched, Tone: htmlreport.Fail, Open: true,
		Tags: []htmlreport.Tag{{Text: "drift", Tone: htmlreport.Fail}}}
	fact := func(label, value string) {
		row.Facts = append(row.Facts, htmlreport.Fact{Label: label, Value: red(value)})
	}
	if m.Key == "" {
		fact("reason", m.Reason)
	} else {
		fact("key", m.Key)
	}
	if m.Source != "" {
		fact("from", m.Source)
	}
	if m.Count > 1 {
		fact("requested", fmt.Sprintf("%d times", m.Count))
	}
	switch {
	case m.Closest != "":
		fact("closest snapshot", m.Closest)
		for i, n := range m.Near {
			fact(fmt.Sprintf("close #%d", i+1), n.File+" ("+nearWhy(n)+")\n"+strings.Join(n.Changes, "\n"))
		}
		old, new := diffSides(m.Diff)
		row.Diffs = append(row.Diffs, htmlreport.Diff{Title: "request against the closest snapshot", OldLabel: red(m.Closest), NewLabel: "this request", Old: red(old), New: red(new)})
	case m.Key != "":
		fact("closest snapshot", "none: no snapshot of this provider to compare with")
	}
	if m.Key != "" {
		fact("fix", "if the change is intended, record it: traceforge record --only-missing -- <your command>, and commit the snapshot folder")
	}
	return row
}

// diffSides turns a unified diff back into the two texts it compares, as
// far as its hunks show them; a "⋯" line stands for the unchanged lines
// between two hunks.
func diffSides(unified string) (old, new string) {
	var o, n strings.Builder
	hunks := 0
	for _, line := range strings.Split(strings.TrimSuffix(unified, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "):
		case strings.HasPrefix(line, "@@"):
			if hunks > 0 {
				o.WriteString("⋯\n")
				n.WriteString("⋯\n")
			}
			hunks++
		case strings.HasPrefix(line, "-"):
			o.WriteString(line[1:] + "\n")
		case strings.HasPrefix(line, "+"):
			n.WriteString(line[1:] + "\n")
		case strings.HasPrefix(line, " "):
			o.WriteString(line[1:] + "\n")
			n.WriteString(line[1:] + "\n")
		}
	}
	return o.String(), n.String()
}

// rowID makes a file name usable as an HTML id and link anchor.
func rowID(file string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '-'
	}, file)
}
