package render

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Formats a report can be written in.
var Formats = []string{"text", "json", "junit", "github", "html"}

// Verify writes the verify report in format (one of Formats), redacted;
// colour applies to text only.
func Verify(w io.Writer, rep *result.VerifyReport, format string, colour bool) error {
	r := named(rep)
	rw := NewRedactor(w)
	var err error
	switch format {
	case "", "text":
		err = r.writeText(rw, colour)
	case "json":
		err = r.writeJSON(rw)
	case "junit":
		err = r.writeJUnit(rw)
	case "github":
		err = r.writeGitHub(rw)
	case "html":
		err = r.writeHTML(rw)
	default:
		return fmt.Errorf("unknown report format %q (use one of %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	return rw.Flush()
}

// report is a verify report being written: its findings name their files
// under the snapshot folder (named), and every format's writer is one of
// its methods, in the file of that format.
type report struct{ *result.VerifyReport }

// named returns a copy of rep whose findings name their files under the
// snapshot folder, as every format shows them.
func named(rep *result.VerifyReport) report {
	c := *rep
	c.Findings = make(finding.Findings, len(rep.Findings))
	for i, f := range rep.Findings {
		f.File = joinDir(rep.Dir, f.File)
		c.Findings[i] = f
	}
	return report{&c}
}

// VerifySummary is the report's last text line ("ok   3 snapshot(s) checked"
// or "FAIL …") without colour; it holds only counts.
func VerifySummary(rep *result.VerifyReport) string { return report{rep}.summary(style{}) }

type style struct{ on bool }

func (s style) c(code, text string) string {
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
func (s style) red(t string) string    { return s.c("31", t) }
func (s style) green(t string) string  { return s.c("32", t) }
func (s style) yellow(t string) string { return s.c("33", t) }
func (s style) dim(t string) string    { return s.c("2", t) }
func (s style) bold(t string) string   { return s.c("1", t) }

// nearWhy says in words why a close snapshot ranks where it does.
func nearWhy(n result.Near) string {
	var parts []string
	if n.SameSource {
		parts = append(parts, "same source")
	}
	if n.SameModel {
		parts = append(parts, "same model and endpoint")
	}
	parts = append(parts, fmt.Sprintf("%.0f%% similar", n.Similarity*100))
	return strings.Join(parts, ", ")
}

// maxChanges caps the change lines shown per close snapshot in text.
const maxChanges = 12

// nearText is the close-snapshot list of a miss, as text and JUnit show it.
func nearText(m result.Miss, st style) string {
	var b strings.Builder
	for i, n := range m.Near {
		fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, n.File, nearWhy(n))
		shown := n.Changes
		if len(shown) > maxChanges {
			shown = shown[:maxChanges]
		}
		for _, c := range shown {
			fmt.Fprintf(&b, "   %s\n", c)
		}
		if len(n.Changes) > len(shown) {
			fmt.Fprintf(&b, "   %s\n", st.dim(fmt.Sprintf("… and %d more changes", len(n.Changes)-len(shown))))
		}
		if len(n.Changes) == 0 {
			b.WriteString("   (no difference in the request; the key differs by its headers or endpoint)\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func bypassLine(b result.Bypass) string {
	s := fmt.Sprintf("%s %s refused (--deny-bypass)", b.Method, b.Target)
	if b.Count > 1 {
		s += fmt.Sprintf(" ×%d", b.Count)
	}
	return s
}

// failOnText names the classes a live run fails on, for the "live:" line.
func (r report) failOnText() string {
	if r.FailOn == nil {
		return ""
	}
	return "; fail_on: " + classesOrNone(r.FailOn)
}

// classLine names a live result's change classes and the failing ones.
func classLine(l result.LiveResult) string {
	if len(l.Classes) == 0 {
		return ""
	}
	line := "classes: " + change.Names(l.Classes)
	if len(l.FailingClasses) > 0 {
		line += " (failing: " + change.Names(l.FailingClasses) + ")"
	}
	return line
}

func (r report) summary(st style) string {
	errs := r.Findings.Errors()
	failedFiles := map[string]bool{}
	for _, f := range r.Findings {
		if f.Severity == finding.Error {
			failedFiles[f.File] = true
		}
	}
	var parts []string
	if errs > 0 {
		parts = append(parts, fmt.Sprintf("%d problem(s) in %d file(s)", errs, len(failedFiles)))
	}
	if len(r.Misses) > 0 {
		parts = append(parts, fmt.Sprintf("%d unmatched request(s)", len(r.Misses)))
	}
	if len(r.ReplayErrors) > 0 {
		parts = append(parts, fmt.Sprintf("%d replay error(s)", len(r.ReplayErrors)))
	}
	if len(r.Bypassed) > 0 {
		parts = append(parts, fmt.Sprintf("%d call destination(s) bypassed the base URL", len(r.Bypassed)))
	}
	if r.FailOnUnused && len(r.Unused) > 0 {
		parts = append(parts, fmt.Sprintf("%d unused snapshot(s)", len(r.Unused)))
	}
	nlive := 0
	for _, l := range r.Live {
		if l.Failed {
			nlive++
		}
	}
	if nlive > 0 {
		parts = append(parts, fmt.Sprintf("%d snapshot(s) failed live", nlive))
	}
	what := fmt.Sprintf("%d snapshot(s) checked", len(r.Checked))
	if r.Shard != "" {
		what += " in shard " + r.Shard
	}
	if r.Mode == "replay" || r.Mode == "serve" {
		what += fmt.Sprintf(", %d request(s) replayed", r.Served)
		if r.Exchanges > 0 {
			what += fmt.Sprintf(" (%d LLM call(s), %d exchange(s))", r.Served-r.Exchanges, r.Exchanges)
		}
	}
	if len(r.Live) > 0 {
		what += fmt.Sprintf(", %d re-run live", len(r.Live))
	}
	if len(r.Synthesized) > 0 {
		what += fmt.Sprintf(", %d synthesized", len(r.Synthesized))
	}
	if n := r.NormalizedCount(); n > 0 {
		what += fmt.Sprintf(", %d matched via key normalizers", n)
	}
	if len(r.Unused) > 0 && !r.FailOnUnused {
		what += fmt.Sprintf(", %d never requested", len(r.Unused))
	}
	if len(parts) > 0 {
		return st.red("FAIL") + " " + strings.Join(parts, ", ") + " (" + what + ")"
	}
	return st.green("ok") + "   " + what
}

// missTitle names a miss in one line.
func missTitle(m result.Miss) string {
	if m.Key == "" {
		return fmt.Sprintf("unsupported %s call %s", m.Provider, m.Path)
	}
	return fmt.Sprintf("unmatched %s request %s (id %s)", m.Provider, m.Endpoint, m.Key[:12])
}

func colourDiff(st style, d string) string {
	if !st.on {
		return d
	}
	lines := strings.Split(d, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			lines[i] = st.bold(l)
		case strings.HasPrefix(l, "+"):
			lines[i] = st.green(l)
		case strings.HasPrefix(l, "-"):
			lines[i] = st.red(l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = st.c("36", l)
		}
	}
	return strings.Join(lines, "\n")
}

func indentLines(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// fileIndex is a report by file: every snapshot file checked, live,
// unused or with findings (and every other file with findings, such as the
// manifest), sorted, with what the report says about it.
type fileIndex struct {
	files                  []string
	findings               map[string]finding.Findings
	live                   map[string]result.LiveResult
	checked, unused, synth map[string]bool
}

func (r report) index() fileIndex {
	ix := fileIndex{findings: map[string]finding.Findings{}, live: map[string]result.LiveResult{},
		checked: set(r.Checked), unused: set(r.Unused), synth: set(r.Synthesized)}
	names := map[string]bool{}
	for _, f := range r.Findings {
		ix.findings[f.File] = append(ix.findings[f.File], f)
		names[f.File] = true
	}
	for _, l := range r.Live {
		ix.live[l.File] = l
		names[l.File] = true
	}
	for _, list := range [][]string{r.Checked, r.Unused} {
		for _, f := range list {
			names[f] = true
		}
	}
	ix.files = make([]string, 0, len(names))
	for f := range names {
		ix.files = append(ix.files, f)
	}
	sort.Strings(ix.files)
	return ix
}

func set(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

func liveType(l result.LiveResult) string {
	switch {
	case l.Nondet:
		return "nondeterminism"
	case l.Drift:
		return "drift"
	}
	return "live"
}

// liveHeadline is the one-line form of a failed live result.
func liveHeadline(l result.LiveResult) string {
	switch {
	case l.Nondet:
		return fmt.Sprintf("Non-deterministic behavior detected: %d/%d runs produced different outputs", l.Different, l.Succeeded) + classSuffix(l)
	case l.Drift:
		return fmt.Sprintf("Drift: %d/%d live runs differ from the recording", l.Different, l.Succeeded) + classSuffix(l)
	}
	return strings.TrimPrefix(firstLine(l.Message), "❌ ")
}

func classSuffix(l result.LiveResult) string {
	if len(l.FailingClasses) == 0 {
		return ""
	}
	return " (" + change.Names(l.FailingClasses) + ")"
}

// liveText is the full text of a live result: message, changes, upstream
// errors, diff and notes.
func liveText(l result.LiveResult) string {
	var b strings.Builder
	b.WriteString(l.Message)
	if cl := classLine(l); cl != "" {
		b.WriteString("\n" + cl)
	}
	for _, c := range l.Changes {
		b.WriteString("\n" + c)
	}
	for _, e := range l.Errors {
		b.WriteString("\nupstream error: " + e)
	}
	if l.Diff != "" {
		b.WriteString("\n" + strings.TrimRight(l.Diff, "\n"))
	}
	for _, n := range l.Notes {
		b.WriteString("\nnote: " + n)
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func classOf(file string) string {
	dir := path.Base(path.Dir(file))
	if snapshot.ValidProvider(dir) {
		return dir
	}
	return "set"
}

// findingText is a finding as one message: its pointer, message and fix
// (after sep), or its verbatim text.
func findingText(f finding.Finding, sep string) string {
	if f.Verbatim != "" {
		return f.Verbatim
	}
	text := f.Message
	if f.Pointer != "" {
		text = f.Pointer + ": " + text
	}
	if f.Fix != "" {
		text += sep + f.Fix
	}
	return text
}

// joinDir names a file relative to the snapshot folder dir ("" = the
// folder itself) the way reports show it.
func joinDir(dir, rel string) string {
	switch {
	case rel == "":
		return dir
	case dir == "":
		return rel
	}
	return dir + "/" + rel
}
