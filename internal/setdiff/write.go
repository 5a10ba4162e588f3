package setdiff

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Formats lists the report formats Write accepts.
var Formats = []string{"text", "markdown", "json", "html"}

// Write renders the report. Every string taken from a snapshot goes through
// the secret redaction of the check pipeline.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.writeText(w)
	case "markdown":
		return r.writeMarkdown(w)
	case "json":
		return r.writeJSON(w)
	case "html":
		return r.writeHTML(w)
	}
	return fmt.Errorf("unknown format %q (use %s)", format, strings.Join(Formats, ", "))
}

func red(s string) string { return check.Redact(s) }

// summary is the one-line count of the report.
func (r *Report) summary() string {
	parts := []string{
		fmt.Sprintf("%d changed", r.Count(Changed)),
		fmt.Sprintf("%d added", r.Count(Added)),
		fmt.Sprintf("%d removed", r.Count(Removed)),
	}
	if n := r.Count(Unreadable); n > 0 {
		parts = append(parts, fmt.Sprintf("%d unreadable", n))
	}
	parts = append(parts, fmt.Sprintf("%d unchanged", r.Unchanged))
	s := strings.Join(parts, ", ")
	if n := len(r.Failing()); n > 0 {
		s += fmt.Sprintf("; %d failing (fail_on: %s)", n, change.Names(r.FailOn))
	}
	return s
}

func signed(n int64) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprintf("%d", n)
}

// facts are the label/value lines of a changed item, in report order.
func (it *Item) facts() [][2]string {
	var out [][2]string
	c := it.Change
	if c.FinishReason != nil {
		out = append(out, [2]string{"finish", c.FinishReason.From + " → " + c.FinishReason.To})
	}
	if c.ToolCalls != nil {
		out = append(out, [2]string{"tool calls", toolList(c.ToolCalls.From) + " → " + toolList(c.ToolCalls.To)})
	}
	if c.Model != nil {
		out = append(out, [2]string{"served", orNone(c.Model.From) + " → " + orNone(c.Model.To)})
	}
	if c.TokensUsed != nil {
		out = append(out, [2]string{"tokens", fmt.Sprintf("%d → %d (%s)", c.TokensUsed.From, c.TokensUsed.To, signed(c.TokensUsed.Delta()))})
	}
	if c.LatencyMS != nil {
		out = append(out, [2]string{"latency", fmt.Sprintf("%dms → %dms (%sms)", c.LatencyMS.From, c.LatencyMS.To, signed(c.LatencyMS.Delta()))})
	}
	if it.Source != nil {
		out = append(out, [2]string{"moved", it.Source.From + " → " + it.Source.To})
	}
	for _, n := range it.Notes {
		out = append(out, [2]string{"note", n})
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func toolList(calls []change.ToolCall) string {
	if len(calls) == 0 {
		return "none"
	}
	s := make([]string, len(calls))
	for i, c := range calls {
		s[i] = clip(c.String(), 200)
	}
	return strings.Join(s, ", ")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func model(it *Item) string {
	m, _ := it.Record().Request["model"].(string)
	return m
}

// preview is the start of an answer on one line.
func preview(s string) string {
	return clip(strings.Join(strings.Fields(s), " "), 80)
}

var statusMark = map[Status]string{Changed: "~", Added: "+", Removed: "-", Unreadable: "!"}

func (r *Report) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "traceforge diff %s → %s (%s)\n", r.From, r.To, r.Dir)
	for i := range r.Items {
		it := &r.Items[i]
		rec := it.Record()
		head := fmt.Sprintf("%s %s", statusMark[it.Status], it.File)
		switch it.Status {
		case Changed:
			cls := change.Names(it.Change.Classes)
			if cls == "" {
				cls = "no answer change"
			}
			head += "  " + cls
			if len(it.Failing) > 0 {
				head += "  [fails: " + change.Names(it.Failing) + "]"
			}
		case Unreadable:
			head += "  unreadable: " + it.Problem
		default:
			head += "  " + string(it.Status)
		}
		fmt.Fprintf(&b, "\n%s\n", red(head))
		if rec != nil {
			fmt.Fprintf(&b, "    %-11s%s\n", "source", red(rec.Source.Display()))
			fmt.Fprintf(&b, "    %-11s%s\n", "model", red(model(it)))
		}
		if it.Status == Added || it.Status == Removed {
			fmt.Fprintf(&b, "    %-11s%q\n", "answer", red(preview(rec.Response.Content)))
		}
		for _, f := range it.facts() {
			fmt.Fprintf(&b, "    %-11s%s\n", f[0], red(f[1]))
		}
		if it.Words != nil {
			fmt.Fprintf(&b, "    %-11s%s\n", "answer", red(wordsText(it.Words)))
		}
	}
	fmt.Fprintf(&b, "\n%s\n", r.summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// wordsText renders a word diff as git's --word-diff=plain does.
func wordsText(spans []change.Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch s.Op {
		case change.Delete:
			b.WriteString("[-" + visible(s.Text) + "-]")
		case change.Insert:
			b.WriteString("{+" + visible(s.Text) + "+}")
		default:
			b.WriteString(s.Text)
		}
	}
	return indentCont(b.String(), "               ")
}

// visible shows a whitespace-only edit: · for a space, → for a tab, ↵ for a
// line feed.
func visible(s string) string {
	if strings.TrimSpace(s) != "" {
		return s
	}
	return strings.NewReplacer(" ", "·", "\t", "→", "\n", "↵", "\r", "").Replace(s)
}

func indentCont(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

// md escapes text for a Markdown paragraph or table cell (GitHub flavour):
// Markdown punctuation is backslash-escaped, HTML is escaped, line feeds
// become <br>.
func md(s string) string {
	var b strings.Builder
	for _, r := range red(s) {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '#', '~', '|', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	return strings.ReplaceAll(htmlEscaper.Replace(b.String()), "\n", "<br>")
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// code is s as a Markdown code span inside a table cell.
func code(s string) string {
	s = strings.NewReplacer("`", "'", "|", "\\|", "\n", " ").Replace(red(s))
	return "`" + s + "`"
}

var statusIcon = map[Status]string{Changed: "✏️ changed", Added: "➕ added", Removed: "➖ removed", Unreadable: "⚠️ unreadable"}

func (r *Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### traceforge: snapshot changes %s → %s\n\n", code(r.From), md(r.To))
	fmt.Fprintf(&b, "%s\n", md(r.summary()))
	if len(r.Items) == 0 {
		b.WriteString("\nNo snapshot changed.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n| | Snapshot | Source | What changed |\n|---|---|---|---|\n")
	for i := range r.Items {
		it := &r.Items[i]
		what := ""
		switch it.Status {
		case Changed:
			var cls []string
			for _, c := range it.Change.Classes {
				name := "`" + string(c) + "`"
				for _, f := range it.Failing {
					if f == c {
						name = "**" + name + "** ❌"
					}
				}
				cls = append(cls, name)
			}
			what = strings.Join(cls, ", ")
			if c := it.Change.TokensUsed; c != nil {
				what = joinNonEmpty(what, fmt.Sprintf("tokens %s", signed(c.Delta())))
			}
			if it.Change.Model != nil {
				what = joinNonEmpty(what, "served model")
			}
			if it.Source != nil {
				what = joinNonEmpty(what, "moved")
			}
			if what == "" {
				what = "metadata only"
			}
		case Unreadable:
			what = md(it.Problem)
		default:
			what = md(preview(it.Record().Response.Content))
			if it.Replaces != nil {
				what = "replaces " + code(snapshot.RelPath(it.Replaces.Provider, it.Replaces.ID)) + " (request changed): " + what
			}
		}
		src := ""
		if rec := it.Record(); rec != nil {
			src = code(rec.Source.File + ":" + fmt.Sprint(rec.Source.Line))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", statusIcon[it.Status], code(it.File), src, what)
	}
	for i := range r.Items {
		it := &r.Items[i]
		if it.Status != Changed {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary><code>%s</code> %s</summary>\n\n", html.EscapeString(it.File), html.EscapeString(change.Names(it.Change.Classes)))
		for _, f := range it.facts() {
			fmt.Fprintf(&b, "- **%s**: %s\n", f[0], md(f[1]))
		}
		if it.Words != nil {
			b.WriteString("\n**Answer**\n\n> ")
			for _, s := range it.Words {
				switch s.Op {
				case change.Delete:
					b.WriteString("<del>" + strings.ReplaceAll(md(visible(s.Text)), "<br>", "<br>\n> ") + "</del>")
				case change.Insert:
					b.WriteString("<ins>" + strings.ReplaceAll(md(visible(s.Text)), "<br>", "<br>\n> ") + "</ins>")
				default:
					b.WriteString(strings.ReplaceAll(md(s.Text), "<br>", "<br>\n> "))
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

type jsonItem struct {
	Status      Status                  `json:"status"`
	File        string                  `json:"file"`
	ID          string                  `json:"id"`
	Provider    string                  `json:"provider"`
	Model       string                  `json:"model,omitempty"`
	Source      string                  `json:"source,omitempty"`
	Classes     []change.Class          `json:"classes"`
	Failing     []change.Class          `json:"failing"`
	Finish      *change.StringChange    `json:"finish_reason,omitempty"`
	ToolCalls   *change.ToolCallsChange `json:"tool_calls,omitempty"`
	ServedModel *change.StringChange    `json:"served_model,omitempty"`
	Tokens      *jsonDelta              `json:"tokens_used,omitempty"`
	Latency     *jsonDelta              `json:"latency_ms,omitempty"`
	Moved       *change.StringChange    `json:"source_moved,omitempty"`
	Answer      []change.Span           `json:"answer_diff,omitempty"`
	Notes       []string                `json:"notes,omitempty"`
	Problem     string                  `json:"problem,omitempty"`
}

type jsonDelta struct {
	From  int64 `json:"from"`
	To    int64 `json:"to"`
	Delta int64 `json:"delta"`
}

func delta(c *change.IntChange) *jsonDelta {
	if c == nil {
		return nil
	}
	return &jsonDelta{c.From, c.To, c.Delta()}
}

func redChange(c *change.StringChange) *change.StringChange {
	if c == nil {
		return nil
	}
	return &change.StringChange{From: red(c.From), To: red(c.To)}
}

func (r *Report) writeJSON(w io.Writer) error {
	items := make([]jsonItem, 0, len(r.Items))
	for i := range r.Items {
		it := &r.Items[i]
		j := jsonItem{Status: it.Status, File: r.Dir + "/" + it.File, Classes: it.Change.Classes, Failing: it.Failing,
			Finish: it.Change.FinishReason, ToolCalls: it.Change.ToolCalls, ServedModel: it.Change.Model,
			Tokens: delta(it.Change.TokensUsed), Latency: delta(it.Change.LatencyMS), Moved: redChange(it.Source),
			Notes: it.Notes, Problem: it.Problem}
		if j.Classes == nil {
			j.Classes = []change.Class{}
		}
		if j.Failing == nil {
			j.Failing = []change.Class{}
		}
		if rec := it.Record(); rec != nil {
			j.ID, j.Provider, j.Model, j.Source = rec.ID, rec.Provider, red(model(it)), red(rec.Source.Display())
		}
		for _, s := range it.Words {
			j.Answer = append(j.Answer, change.Span{Op: s.Op, Text: red(s.Text)})
		}
		if tc := j.ToolCalls; tc != nil {
			j.ToolCalls = &change.ToolCallsChange{From: redCalls(tc.From), To: redCalls(tc.To)}
		}
		items = append(items, j)
	}
	doc := map[string]any{
		"from": r.From, "to": r.To, "dir": r.Dir,
		"fail_on": r.FailOn,
		"summary": map[string]int{
			"changed": r.Count(Changed), "added": r.Count(Added), "removed": r.Count(Removed),
			"unreadable": r.Count(Unreadable), "unchanged": r.Unchanged, "failing": len(r.Failing()),
		},
		"snapshots": items,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func redCalls(cs []change.ToolCall) []change.ToolCall {
	out := make([]change.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = change.ToolCall{Name: red(c.Name), Arguments: red(c.Arguments)}
	}
	return out
}
