// Package verify checks a snapshot set statically, replays it to an
// application through a loopback server, re-runs it live, and renders the
// results as text, JSON, JUnit XML or GitHub workflow annotations.
package verify

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/check"
)

// Formats a report can be written in.
var Formats = []string{"text", "json", "junit", "github"}

// Miss is a replay request that matched no snapshot (drift).
type Miss struct {
	Provider string `json:"provider"`
	Endpoint string `json:"endpoint"`
	Key      string `json:"key"`
	Source   string `json:"source,omitempty"`
	Closest  string `json:"closest,omitempty"` // display path of the closest snapshot
	Diff     string `json:"diff,omitempty"`    // unified diff closest → request
	Count    int    `json:"count"`
}

// LiveResult is the outcome of --live for one snapshot.
type LiveResult struct {
	File        string   `json:"file"`
	Runs        int      `json:"runs"`
	Succeeded   int      `json:"succeeded"`
	Different   int      `json:"different"` // runs not equal to the recording
	Drift       bool     `json:"drift"`
	Nondet      bool     `json:"nondeterministic"`
	ByPolicy    bool     `json:"nondeterministic_by_policy,omitempty"`
	Diff        string   `json:"diff,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	Errors      []string `json:"errors,omitempty"`
	Message     string   `json:"message,omitempty"`
	Failed      bool     `json:"failed"`
	Synthesized bool     `json:"synthesized,omitempty"`
}

// Report gathers everything a verify run found.
type Report struct {
	Dir       string         `json:"dir"`
	Mode      string         `json:"mode"` // static, replay, live, serve
	Checked   []string       `json:"snapshots"`
	Findings  check.Findings `json:"findings"`
	Misses    []Miss         `json:"unmatched,omitempty"`
	Unused    []string       `json:"unused,omitempty"`
	Served    int            `json:"served,omitempty"`
	Live      []LiveResult   `json:"live,omitempty"`
	Command   string         `json:"command,omitempty"`
	ExitCode  *int           `json:"command_exit_code,omitempty"`
	Exception []string       `json:"exceptions,omitempty"`
	// FailOnUnused turns unused snapshots into failures.
	FailOnUnused bool `json:"-"`
}

// Failed reports whether the run must fail (exit 1).
func (r *Report) Failed() bool {
	if r.Findings.Errors() > 0 || len(r.Misses) > 0 {
		return true
	}
	if r.FailOnUnused && len(r.Unused) > 0 {
		return true
	}
	for _, l := range r.Live {
		if l.Failed {
			return true
		}
	}
	return false
}

// Write renders the report in format.
func (r *Report) Write(w io.Writer, format string, colour bool) error {
	switch format {
	case "", "text":
		return r.writeText(w, colour)
	case "json":
		return r.writeJSON(w)
	case "junit":
		return r.writeJUnit(w)
	case "github":
		return r.writeGitHub(w)
	}
	return fmt.Errorf("unknown report format %q (use one of %s)", format, strings.Join(Formats, ", "))
}

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

func red(s string) string { return check.Redact(s) }

func (r *Report) writeText(w io.Writer, colour bool) error {
	st := style{colour}
	byFile := map[string]check.Findings{}
	var files []string
	for _, f := range r.Findings {
		if _, ok := byFile[f.File]; !ok {
			files = append(files, f.File)
		}
		byFile[f.File] = append(byFile[f.File], f)
	}
	for _, file := range files {
		fs := byFile[file]
		mark := st.red("✗")
		if fs.Errors() == 0 {
			mark = st.yellow("•")
		}
		fmt.Fprintf(w, "%s %s\n", mark, st.bold(red(file)))
		for _, f := range fs {
			if f.Verbatim != "" {
				fmt.Fprintln(w, indentLines(red(f.Verbatim), "  "))
				continue
			}
			ptr := ""
			if f.Pointer != "" {
				ptr = f.Pointer + ": "
			}
			sev := ""
			if f.Severity == check.Note {
				sev = "note: "
			}
			fmt.Fprintf(w, "  %s%s%s %s\n", sev, ptr, red(f.Message), st.dim("["+f.Rule+"]"))
			if f.Fix != "" {
				fmt.Fprintf(w, "  %s %s\n", st.dim("fix:"), red(f.Fix))
			}
		}
		fmt.Fprintln(w)
	}
	for _, m := range r.Misses {
		fmt.Fprintf(w, "%s %s\n", st.red("✗"), st.bold(fmt.Sprintf("unmatched %s request %s (key %s)", m.Provider, m.Endpoint, m.Key[:12])))
		if m.Source != "" {
			fmt.Fprintf(w, "  from %s\n", red(m.Source))
		}
		if m.Count > 1 {
			fmt.Fprintf(w, "  requested %d times\n", m.Count)
		}
		if m.Closest != "" {
			fmt.Fprintf(w, "  closest snapshot: %s\n", m.Closest)
			fmt.Fprintln(w, indentLines(colourDiff(st, red(m.Diff)), "  "))
		} else {
			fmt.Fprintln(w, "  no snapshot of this provider to compare with")
		}
		fmt.Fprintf(w, "  %s record it: traceforge record -- <your command>, or traceforge record --only-missing -- <your command>\n\n", st.dim("fix:"))
	}
	for _, l := range r.Live {
		if !l.Failed && len(l.Notes) == 0 && !l.ByPolicy {
			continue
		}
		mark := st.red("✗")
		if !l.Failed {
			mark = st.yellow("•")
		}
		fmt.Fprintf(w, "%s %s\n", mark, st.bold(l.File))
		if l.Message != "" {
			fmt.Fprintln(w, indentLines(red(l.Message), "  "))
		}
		for _, e := range l.Errors {
			fmt.Fprintf(w, "  upstream error: %s\n", red(e))
		}
		if l.Diff != "" {
			fmt.Fprintln(w, indentLines(colourDiff(st, red(l.Diff)), "  "))
		}
		for _, n := range l.Notes {
			fmt.Fprintf(w, "  note: %s\n", red(n))
		}
		fmt.Fprintln(w)
	}
	if len(r.Unused) > 0 {
		label := "note"
		if r.FailOnUnused {
			label = st.red("error")
		}
		fmt.Fprintf(w, "%s: %d snapshot(s) were never requested:\n", label, len(r.Unused))
		for _, u := range r.Unused {
			fmt.Fprintf(w, "  %s\n", u)
		}
		fmt.Fprintln(w)
	}
	for _, e := range r.Exception {
		fmt.Fprintf(w, "policy: %s\n", red(e))
	}
	fmt.Fprintln(w, r.summary(st))
	return nil
}

func (r *Report) summary(st style) string {
	errs := r.Findings.Errors()
	failedFiles := map[string]bool{}
	for _, f := range r.Findings {
		if f.Severity == check.Error {
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
	if r.Mode == "replay" || r.Mode == "serve" {
		what += fmt.Sprintf(", %d request(s) replayed", r.Served)
	}
	if len(r.Live) > 0 {
		what += fmt.Sprintf(", %d re-run live", len(r.Live))
	}
	if len(parts) > 0 {
		return st.red("FAIL") + " " + strings.Join(parts, ", ") + " (" + what + ")"
	}
	return st.green("ok") + "   " + what
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

type jsonFinding struct {
	check.Finding
	Severity string `json:"severity"`
}

func (r *Report) writeJSON(w io.Writer) error {
	fs := make([]jsonFinding, 0, len(r.Findings))
	for _, f := range r.Findings {
		f.Message, f.Fix = red(f.Message), red(f.Fix)
		fs = append(fs, jsonFinding{f, f.Severity.String()})
	}
	misses := append([]Miss(nil), r.Misses...)
	for i := range misses {
		misses[i].Diff = red(misses[i].Diff)
	}
	out := struct {
		OK        bool          `json:"ok"`
		Dir       string        `json:"dir"`
		Mode      string        `json:"mode"`
		Snapshots int           `json:"snapshots"`
		Findings  []jsonFinding `json:"findings"`
		Unmatched []Miss        `json:"unmatched"`
		Unused    []string      `json:"unused"`
		Served    int           `json:"replayed"`
		Live      []LiveResult  `json:"live,omitempty"`
		Command   string        `json:"command,omitempty"`
		ExitCode  *int          `json:"command_exit_code,omitempty"`
		Policy    []string      `json:"exceptions,omitempty"`
	}{!r.Failed(), r.Dir, r.Mode, len(r.Checked), fs, misses, r.Unused, r.Served, r.Live, r.Command, r.ExitCode, r.Exception}
	if out.Unmatched == nil {
		out.Unmatched = []Miss{}
	}
	if out.Unused == nil {
		out.Unused = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	File      string         `xml:"file,attr,omitempty"`
	Failures  []junitFailure `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

// junitCases builds one test case per snapshot file (and per other file with
// findings), one per unmatched request and one per live result.
func (r *Report) junitCases() []junitCase {
	byFile := map[string][]check.Finding{}
	for _, f := range r.Findings {
		byFile[f.File] = append(byFile[f.File], f)
	}
	names := map[string]bool{}
	for _, c := range r.Checked {
		names[c] = true
	}
	for f := range byFile {
		names[f] = true
	}
	var files []string
	for f := range names {
		files = append(files, f)
	}
	sort.Strings(files)
	var cases []junitCase
	for _, f := range files {
		c := junitCase{Name: f, Classname: "traceforge." + classOf(f), File: f}
		var notes []string
		for _, fd := range byFile[f] {
			text := fd.Message
			if fd.Pointer != "" {
				text = fd.Pointer + ": " + text
			}
			if fd.Fix != "" {
				text += "\nfix: " + fd.Fix
			}
			if fd.Verbatim != "" {
				text = fd.Verbatim
			}
			if fd.Severity == check.Note {
				notes = append(notes, red(text))
				continue
			}
			c.Failures = append(c.Failures, junitFailure{Message: red(fd.Message), Type: fd.Rule, Text: red(text)})
		}
		c.SystemOut = strings.Join(notes, "\n")
		cases = append(cases, c)
	}
	for _, m := range r.Misses {
		cases = append(cases, junitCase{Name: fmt.Sprintf("unmatched %s %s %s", m.Provider, m.Endpoint, m.Key[:12]), Classname: "traceforge.replay",
			Failures: []junitFailure{{Message: "request matches no snapshot (drift)", Type: "drift", Text: red("closest: " + m.Closest + "\n" + m.Diff)}}})
	}
	if r.FailOnUnused {
		for _, u := range r.Unused {
			cases = append(cases, junitCase{Name: "unused " + u, Classname: "traceforge.replay", File: u,
				Failures: []junitFailure{{Message: "snapshot was never requested", Type: "unused", Text: u}}})
		}
	}
	for _, l := range r.Live {
		c := junitCase{Name: "live " + l.File, Classname: "traceforge.live", File: l.File}
		if l.Failed {
			c.Failures = []junitFailure{{Message: red(firstLine(l.Message)), Type: "live", Text: red(l.Message + "\n" + l.Diff)}}
		}
		c.SystemOut = red(strings.Join(l.Notes, "\n"))
		cases = append(cases, c)
	}
	return cases
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func classOf(file string) string {
	dir := path.Base(path.Dir(file))
	if dir == "openai" || dir == "anthropic" {
		return dir
	}
	return "set"
}

func (r *Report) writeJUnit(w io.Writer) error {
	cases := r.junitCases()
	suite := junitSuite{Name: "traceforge verify " + r.Dir, Cases: cases, Tests: len(cases)}
	for _, c := range cases {
		if len(c.Failures) > 0 {
			suite.Failures++
		}
	}
	doc := junitSuites{Name: "traceforge", Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// GitHub workflow command escaping.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func (r *Report) writeGitHub(w io.Writer) error {
	for _, f := range r.Findings {
		level := "error"
		if f.Severity == check.Note {
			level = "notice"
		}
		msg := f.Message
		if f.Pointer != "" {
			msg = f.Pointer + ": " + msg
		}
		if f.Verbatim != "" {
			msg = f.Verbatim
		}
		if f.Fix != "" && f.Verbatim == "" {
			msg += "\nfix: " + f.Fix
		}
		fmt.Fprintf(w, "::%s file=%s,title=%s::%s\n", level, ghProp(f.File), ghProp("traceforge "+f.Rule), ghData(red(msg)))
	}
	for _, m := range r.Misses {
		file := m.Closest
		props := "title=" + ghProp("traceforge drift")
		if file != "" {
			props = "file=" + ghProp(file) + "," + props
		}
		fmt.Fprintf(w, "::error %s::%s\n", props, ghData(red(fmt.Sprintf("unmatched %s request %s (key %s)\n%s", m.Provider, m.Endpoint, m.Key[:12], m.Diff))))
	}
	if r.FailOnUnused {
		for _, u := range r.Unused {
			fmt.Fprintf(w, "::error file=%s,title=%s::%s\n", ghProp(u), ghProp("traceforge unused"), "snapshot was never requested")
		}
	}
	for _, l := range r.Live {
		if l.Failed {
			fmt.Fprintf(w, "::error file=%s,title=%s::%s\n", ghProp(l.File), ghProp("traceforge live"), ghData(red(l.Message+"\n"+l.Diff)))
		}
	}
	fmt.Fprintln(w, r.summary(style{}))
	return nil
}
