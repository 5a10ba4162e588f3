package render

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/ledger"
)

// Formats a report can be written in.
var Formats = []string{"text", "json", "junit", "github", "html"}

// Miss is a replay request that matched no snapshot (drift).
// Key is empty for a call that could not be keyed (Reason says why).
type Miss struct {
	Provider string `json:"provider"`
	Endpoint string `json:"endpoint,omitempty"`
	Path     string `json:"path,omitempty"` // the path the application called
	Key      string `json:"key,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Source   string `json:"source,omitempty"`
	Closest  string `json:"closest,omitempty"` // display path of the closest snapshot
	Diff     string `json:"diff,omitempty"`    // unified diff closest → request
	Count    int    `json:"count"`
	// Near are the closest snapshots (at most three), best first, each
	// with what differs; Near[0] is Closest.
	Near []Near `json:"closest_snapshots,omitempty"`
	// AnnotateFile and AnnotateLine place the GitHub annotation: the
	// request's source file and line when that file exists in the project,
	// else "" (the closest snapshot's file is used).
	AnnotateFile string `json:"-"`
	AnnotateLine int    `json:"-"`
}

// Near is a snapshot close to an unmatched request.
type Near struct {
	File       string  `json:"file"` // display path
	Source     string  `json:"source,omitempty"`
	SameSource bool    `json:"same_source"`
	SameModel  bool    `json:"same_model_and_endpoint"`
	Similarity float64 `json:"similarity"` // structural, 0..1
	// Changes lists what differs from the snapshot's key request to the
	// request's, one JSON pointer per line: `/messages/1/content: "a" → "b"`,
	// `/user: absent → "x"` (added), `/seed: 7 → absent` (removed).
	Changes []string `json:"changes"`
}

// why says in words why a close snapshot ranks where it does.
func (n Near) why() string {
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
func (m Miss) nearText(st style) string {
	var b strings.Builder
	for i, n := range m.Near {
		fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, n.File, n.why())
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

// LiveResult is the outcome of --live for one snapshot.
type LiveResult struct {
	File        string   `json:"file"`
	Runs        int      `json:"runs"`
	Succeeded   int      `json:"succeeded"`
	Different   int      `json:"different"` // runs that fail against the recording (a fail_on class, or live_compare)
	Drift       bool     `json:"drift"`
	Nondet      bool     `json:"nondeterministic"`
	ByPolicy    bool     `json:"nondeterministic_by_policy,omitempty"`
	Changes     []string `json:"changes,omitempty"` // provider.Diff of the first differing run
	Diff        string   `json:"diff,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	Errors      []string `json:"errors,omitempty"`
	Message     string   `json:"message,omitempty"`
	Failed      bool     `json:"failed"`
	Synthesized bool     `json:"synthesized,omitempty"`

	// Classes are the change classes the live runs show against the
	// recording (every class any run shows, in change.All order);
	// FailingClasses those the config's fail_on lists (what fails it; none
	// under a policy exception, which compares its live_compare fields).
	// Changes and Diff are those of the shown run: the first failing one,
	// else the first that differs.
	Classes        []change.Class `json:"classes,omitempty"`
	FailingClasses []change.Class `json:"failing_classes,omitempty"`
	// Change is the shown run against the recording (the HTML report's
	// side-by-side diffs); nil when every run equals the recording.
	Change *change.Result `json:"-"`
}

// Replayed is what a replay server saw, once it stopped.
type Replayed struct {
	Misses []Miss   // requests that matched no snapshot (drift)
	Unused []string // display paths of the snapshots never requested
	Served int      // requests answered from a snapshot
	// Synthesized lists snapshots answered with a synthesized body.
	Synthesized []string
	// ReplayErrors are snapshots whose recorded response could not be sent.
	ReplayErrors []string
	// Normalized lists the snapshots matched only thanks to a declared key
	// normalizer, by display path.
	Normalized []NormalizedMatch
	// Bypassed lists the calls refused under --deny-bypass: they escaped
	// the base URL (CONNECT or absolute-form through the proxy variables).
	Bypassed []Bypass
}

// Bypass is one destination reached for through the proxy variables.
type Bypass struct {
	Method string `json:"method"`
	Target string `json:"target"` // host:port
	Count  int    `json:"count"`
	Hint   string `json:"fix"`
}

func (b Bypass) line() string {
	s := fmt.Sprintf("%s %s refused (--deny-bypass)", b.Method, b.Target)
	if b.Count > 1 {
		s += fmt.Sprintf(" ×%d", b.Count)
	}
	return s
}

// NormalizedMatch is a snapshot that answered requests whose keys declared
// key normalizers changed ("matched via uuid").
type NormalizedMatch struct {
	Snapshot string   `json:"snapshot"`
	Rules    []string `json:"via"`
	Count    int      `json:"count"`
}

// NormalizedCount is the number of replayed requests that needed a rule.
func (r Replayed) NormalizedCount() int {
	n := 0
	for _, m := range r.Normalized {
		n += m.Count
	}
	return n
}

// VerifyReport is everything a verify run found: the static checks, what
// replay saw, the live results, and how the run was made. It is a value:
// the command builds it from each stage's result and renders it once.
type VerifyReport struct {
	Dir       string // the snapshot folder's display name
	Mode      string // static, replay, live, serve
	Checked   []string
	Findings  finding.Findings
	Exception []string // policy exceptions applied
	Replayed
	Live     []LiveResult
	Command  string
	ExitCode *int
	// Shard is the --shard K/N verified ("" = the whole set).
	Shard string
	// Upstreams lists the live upstreams ("openai: URL").
	Upstreams []string
	// LiveRuns is --runs of a live verification.
	LiveRuns int
	// FailOnUnused turns unused snapshots into failures.
	FailOnUnused bool
	// FailOn is the classes a live run fails on (the config's fail_on).
	FailOn []change.Class
	// Totals are the run's calls, tokens, cost and latency (verify --live);
	// nil when the run made no upstream call.
	Totals *ledger.Summary
}

// Failed reports whether the run must fail (exit 1).
func (r *VerifyReport) Failed() bool {
	if r.Findings.Errors() > 0 || len(r.Misses) > 0 || len(r.ReplayErrors) > 0 || len(r.Bypassed) > 0 {
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

// Write renders the report in format, redacted.
func (r *VerifyReport) Write(w io.Writer, format string, colour bool) error {
	r = r.named()
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

// named returns a copy of r whose findings name their files under the
// snapshot folder, as every format shows them.
func (r *VerifyReport) named() *VerifyReport {
	c := *r
	c.Findings = make(finding.Findings, len(r.Findings))
	for i, f := range r.Findings {
		f.File = joinDir(r.Dir, f.File)
		c.Findings[i] = f
	}
	return &c
}

// SummaryLine is the report's last text line ("ok   3 snapshot(s) checked"
// or "FAIL …") without colour; it holds only counts.
func (r *VerifyReport) SummaryLine() string { return r.summary(style{}) }

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

func (r *VerifyReport) writeText(w io.Writer, colour bool) error {
	st := style{colour}
	byFile := map[string]finding.Findings{}
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
		fmt.Fprintf(w, "%s %s\n", mark, st.bold(file))
		for _, f := range fs {
			if f.Verbatim != "" {
				fmt.Fprintln(w, indentLines(f.Verbatim, "  "))
				continue
			}
			ptr := ""
			if f.Pointer != "" {
				ptr = f.Pointer + ": "
			}
			sev := ""
			if f.Severity == finding.Note {
				sev = "note: "
			}
			fmt.Fprintf(w, "  %s%s%s %s\n", sev, ptr, f.Message, st.dim("["+f.Rule+"]"))
			if f.Fix != "" {
				fmt.Fprintf(w, "  %s %s\n", st.dim("fix:"), f.Fix)
			}
		}
		fmt.Fprintln(w)
	}
	for _, m := range r.Misses {
		fmt.Fprintf(w, "%s %s\n", st.red("✗"), st.bold(m.title()))
		if m.Key == "" {
			fmt.Fprintf(w, "  %s\n", m.Reason)
			if m.Count > 1 {
				fmt.Fprintf(w, "  requested %d times\n", m.Count)
			}
			fmt.Fprintf(w, "  %s the replay server answers only the recorded calls of the routes in docs/format.md\n\n", st.dim("fix:"))
			continue
		}
		fmt.Fprintf(w, "  key %s\n", m.Key)
		if m.Source != "" {
			fmt.Fprintf(w, "  from %s\n", m.Source)
		}
		if m.Count > 1 {
			fmt.Fprintf(w, "  requested %d times\n", m.Count)
		}
		if len(m.Near) > 0 {
			fmt.Fprintf(w, "  closest snapshots:\n%s\n", indentLines(m.nearText(st), "  "))
			fmt.Fprintf(w, "  diff against %s:\n", m.Closest)
			fmt.Fprintln(w, indentLines(colourDiff(st, m.Diff), "  "))
		} else if m.Closest != "" {
			fmt.Fprintf(w, "  closest snapshot: %s\n", m.Closest)
			fmt.Fprintln(w, indentLines(colourDiff(st, m.Diff), "  "))
		} else {
			fmt.Fprintln(w, "  no snapshot of this provider to compare with")
		}
		fmt.Fprintf(w, "  %s if the change is intended, record it: traceforge record --only-missing -- <your command>, and commit the snapshot folder\n\n", st.dim("fix:"))
	}
	for _, l := range r.Live {
		if !l.Failed && len(l.Notes) == 0 && !l.ByPolicy && len(l.Errors) == 0 {
			continue
		}
		mark := st.red("✗")
		if !l.Failed {
			mark = st.yellow("•")
		}
		fmt.Fprintf(w, "%s %s\n", mark, st.bold(l.File))
		if l.Message != "" {
			fmt.Fprintln(w, indentLines(l.Message, "  "))
		}
		if cl := classLine(l); cl != "" {
			fmt.Fprintf(w, "  %s\n", cl)
		}
		for _, c := range l.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
		for _, e := range l.Errors {
			fmt.Fprintf(w, "  upstream error: %s\n", e)
		}
		if l.Diff != "" {
			fmt.Fprintln(w, indentLines(colourDiff(st, l.Diff), "  "))
		}
		for _, n := range l.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
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
	for _, e := range r.ReplayErrors {
		fmt.Fprintf(w, "%s replay error: %s\n", st.red("✗"), e)
	}
	for _, b := range r.Bypassed {
		fmt.Fprintf(w, "%s %s\n  the application bypassed the base URL; nothing was sent\n  %s %s\n\n", st.red("✗"), st.bold(b.line()), st.dim("fix:"), b.Hint)
	}
	if len(r.Synthesized) > 0 {
		fmt.Fprintf(w, "note: %d snapshot(s) have no stored body; their replies were synthesized from the normalized fields:\n", len(r.Synthesized))
		for _, s := range r.Synthesized {
			fmt.Fprintf(w, "  %s (synthesized)\n", s)
		}
		fmt.Fprintln(w)
	}
	if len(r.Normalized) > 0 {
		fmt.Fprintf(w, "note: %d request(s) matched via key normalizers (%s):\n", r.NormalizedCount(), "normalize in .traceforge.json")
		for _, m := range r.Normalized {
			fmt.Fprintf(w, "  %s matched via %s (%d request(s))\n", m.Snapshot, strings.Join(m.Rules, ", "), m.Count)
		}
		fmt.Fprintln(w)
	}
	for _, e := range r.Exception {
		fmt.Fprintf(w, "policy: %s\n", e)
	}
	if r.Mode == "live" {
		fmt.Fprintf(w, "live: %d run(s) per snapshot against %s%s\n", r.LiveRuns, strings.Join(r.Upstreams, ", "), r.failOnText())
	}
	fmt.Fprintln(w, r.summary(st))
	if r.Totals != nil {
		fmt.Fprintln(w, r.Totals.Line())
	}
	return nil
}

// failOnText names the classes a live run fails on, for the "live:" line.
func (r *VerifyReport) failOnText() string {
	if r.FailOn == nil {
		return ""
	}
	return "; fail_on: " + classesOrNone(r.FailOn)
}

// classLine names a live result's change classes and the failing ones.
func classLine(l LiveResult) string {
	if len(l.Classes) == 0 {
		return ""
	}
	line := "classes: " + change.Names(l.Classes)
	if len(l.FailingClasses) > 0 {
		line += " (failing: " + change.Names(l.FailingClasses) + ")"
	}
	return line
}

func (r *VerifyReport) summary(st style) string {
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

// title names a miss in one line.
func (m Miss) title() string {
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

type jsonFinding struct {
	finding.Finding
	Severity string `json:"severity"`
}

func (r *VerifyReport) writeJSON(w io.Writer) error {
	fs := make([]jsonFinding, 0, len(r.Findings))
	for _, f := range r.Findings {
		fs = append(fs, jsonFinding{f, f.Severity.String()})
	}
	out := struct {
		OK        bool              `json:"ok"`
		Dir       string            `json:"dir"`
		Mode      string            `json:"mode"`
		Snapshots int               `json:"snapshots"`
		Findings  []jsonFinding     `json:"findings"`
		Unmatched []Miss            `json:"unmatched"`
		Unused    []string          `json:"unused"`
		Served    int               `json:"replayed"`
		Synth     []string          `json:"synthesized,omitempty"`
		Norm      []NormalizedMatch `json:"matched_via_normalizers,omitempty"`
		Bypassed  []Bypass          `json:"bypassed,omitempty"`
		ReplayErr []string          `json:"replay_errors,omitempty"`
		Shard     string            `json:"shard,omitempty"`
		Upstreams []string          `json:"upstreams,omitempty"`
		Runs      int               `json:"live_runs,omitempty"`
		Live      []LiveResult      `json:"live,omitempty"`
		Command   string            `json:"command,omitempty"`
		ExitCode  *int              `json:"command_exit_code,omitempty"`
		Policy    []string          `json:"exceptions,omitempty"`
		Summary   string            `json:"summary"`

		FailOn any             `json:"fail_on,omitempty"` // live only; [] when it fails on nothing
		Totals *ledger.Summary `json:"totals,omitempty"`
	}{!r.Failed(), r.Dir, r.Mode, len(r.Checked), fs, r.Misses, r.Unused, r.Served, r.Synthesized, r.Normalized, r.Bypassed, r.ReplayErrors,
		r.Shard, r.Upstreams, r.LiveRuns, r.Live, r.Command, r.ExitCode, r.Exception, r.summary(style{}), nil, r.Totals}
	if r.Mode == "live" && r.FailOn != nil {
		out.FailOn = r.FailOn
	}
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
	Text    string `xml:",cdata"`
}

// junitText is element text written as CDATA, so multi-line diffs stay readable.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	File      string         `xml:"file,attr,omitempty"`
	Failures  []junitFailure `xml:"failure"`
	SystemOut *junitText     `xml:"system-out,omitempty"`
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

// fileIndex is a report by file: every snapshot file checked, live,
// unused or with findings (and every other file with findings, such as the
// manifest), sorted, with what the report says about it.
type fileIndex struct {
	files                  []string
	findings               map[string]finding.Findings
	live                   map[string]LiveResult
	checked, unused, synth map[string]bool
}

func (r *VerifyReport) index() fileIndex {
	ix := fileIndex{findings: map[string]finding.Findings{}, live: map[string]LiveResult{},
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

// junitCases builds one test case per snapshot file (and per other file with
// findings) carrying its static findings, its live result and, with
// --fail-on-unused, its unused failure; then one test case per unmatched
// request and per replay error.
func (r *VerifyReport) junitCases() []junitCase {
	ix := r.index()
	byFile, live, unused, synth, files := ix.findings, ix.live, ix.unused, ix.synth, ix.files
	via := map[string]NormalizedMatch{}
	for _, m := range r.Normalized {
		via[m.Snapshot] = m
	}
	var cases []junitCase
	for _, f := range files {
		c := junitCase{Name: f, Classname: "traceforge." + classOf(f), File: f}
		var notes []string
		for _, fd := range byFile[f] {
			text := findingText(fd, "\nfix: ")
			if fd.Severity == finding.Note {
				notes = append(notes, text)
				continue
			}
			c.Failures = append(c.Failures, junitFailure{Message: fd.Message, Type: fd.Rule, Text: text})
		}
		if l, ok := live[f]; ok {
			if l.Failed {
				c.Failures = append(c.Failures, junitFailure{Message: liveHeadline(l), Type: liveType(l), Text: liveText(l)})
			} else {
				if cl := classLine(l); cl != "" {
					notes = append(notes, fmt.Sprintf("live: %d/%d runs pass; %s", l.Succeeded, l.Runs, cl))
				} else {
					notes = append(notes, fmt.Sprintf("live: %d/%d runs equal to the recording", l.Succeeded, l.Runs))
				}
				for _, e := range l.Errors {
					notes = append(notes, "live upstream error: "+e)
				}
			}
			notes = append(notes, l.Notes...)
		}
		if unused[f] {
			if r.FailOnUnused {
				c.Failures = append(c.Failures, junitFailure{Message: "snapshot was never requested", Type: "unused", Text: f + " was never requested during replay (--fail-on-unused)"})
			} else {
				notes = append(notes, "never requested during replay")
			}
		}
		if synth[f] {
			notes = append(notes, "reply synthesized (the snapshot has no stored body)")
		}
		if m, ok := via[f]; ok {
			notes = append(notes, fmt.Sprintf("matched via %s (%d request(s))", strings.Join(m.Rules, ", "), m.Count))
		}
		if len(notes) > 0 {
			c.SystemOut = &junitText{strings.Join(notes, "\n")}
		}
		cases = append(cases, c)
	}
	for _, m := range r.Misses {
		text := m.Reason
		if m.Key != "" {
			text = "key " + m.Key
			if m.Source != "" {
				text += "\nfrom " + m.Source
			}
			if len(m.Near) > 0 {
				text += "\nclosest snapshots:\n" + m.nearText(style{}) + "\ndiff against " + m.Closest + ":\n" + m.Diff
			} else if m.Closest != "" {
				text += "\nclosest snapshot: " + m.Closest + "\n" + m.Diff
			}
		}
		msg := "request matches no snapshot (drift)"
		if len(m.Near) > 0 && len(m.Near[0].Changes) > 0 {
			msg += "; closest " + m.Near[0].File + ": " + m.Near[0].Changes[0]
			if n := len(m.Near[0].Changes); n > 1 {
				msg += fmt.Sprintf(" (and %d more changes)", n-1)
			}
		}
		if m.Key == "" {
			msg = "call cannot be replayed"
		}
		cases = append(cases, junitCase{Name: m.title(), Classname: "traceforge.replay", File: m.Closest,
			Failures: []junitFailure{{Message: msg, Type: "drift", Text: text}}})
	}
	for _, e := range r.ReplayErrors {
		cases = append(cases, junitCase{Name: "replay error", Classname: "traceforge.replay",
			Failures: []junitFailure{{Message: e, Type: "replay", Text: e}}})
	}
	for _, b := range r.Bypassed {
		cases = append(cases, junitCase{Name: b.Method + " " + b.Target, Classname: "traceforge.bypass",
			Failures: []junitFailure{{Message: b.line(), Type: "bypass", Text: b.line() + "\nfix: " + b.Hint}}})
	}
	return cases
}

func liveType(l LiveResult) string {
	switch {
	case l.Nondet:
		return "nondeterminism"
	case l.Drift:
		return "drift"
	}
	return "live"
}

// liveHeadline is the one-line form of a failed live result.
func liveHeadline(l LiveResult) string {
	switch {
	case l.Nondet:
		return fmt.Sprintf("Non-deterministic behavior detected: %d/%d runs produced different outputs", l.Different, l.Succeeded) + classSuffix(l)
	case l.Drift:
		return fmt.Sprintf("Drift: %d/%d live runs differ from the recording", l.Different, l.Succeeded) + classSuffix(l)
	}
	return strings.TrimPrefix(firstLine(l.Message), "❌ ")
}

func classSuffix(l LiveResult) string {
	if len(l.FailingClasses) == 0 {
		return ""
	}
	return " (" + change.Names(l.FailingClasses) + ")"
}

// liveText is the full text of a live result: message, changes, upstream
// errors, diff and notes.
func liveText(l LiveResult) string {
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
	if dir == "openai" || dir == "anthropic" {
		return dir
	}
	return "set"
}

func (r *VerifyReport) writeJUnit(w io.Writer) error {
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

// GitHub workflow command escaping.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func (r *VerifyReport) writeGitHub(w io.Writer) error {
	for _, f := range r.Findings {
		level := "error"
		if f.Severity == finding.Note {
			level = "notice"
		}
		fmt.Fprintf(w, "::%s file=%s,title=%s::%s\n", level, ghProp(f.File), ghProp("traceforge "+f.Rule), ghData(findingText(f, "\nfix: ")))
	}
	for _, m := range r.Misses {
		file := m.Closest
		props := "title=" + ghProp("traceforge drift")
		switch {
		case m.AnnotateFile != "":
			props = "file=" + ghProp(m.AnnotateFile) + ",line=" + fmt.Sprint(m.AnnotateLine) + "," + props
		case file != "":
			props = "file=" + ghProp(file) + "," + props
		}
		text := m.title() + "\n" + m.Reason
		if m.Key != "" {
			text = m.title() + "\nkey " + m.Key
			if len(m.Near) > 0 {
				text += "\nclosest snapshots:\n" + m.nearText(style{}) + "\ndiff against " + m.Closest + ":"
			}
			text += "\n" + m.Diff
		}
		fmt.Fprintf(w, "::error %s::%s\n", props, ghData(text))
	}
	for _, e := range r.ReplayErrors {
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProp("traceforge replay"), ghData(e))
	}
	for _, b := range r.Bypassed {
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProp("traceforge bypass"), ghData(b.line()+"\nfix: "+b.Hint))
	}
	if r.FailOnUnused {
		for _, u := range r.Unused {
			fmt.Fprintf(w, "::error file=%s,title=%s::%s\n", ghProp(u), ghProp("traceforge unused"), "snapshot was never requested")
		}
	}
	for _, l := range r.Live {
		if l.Failed {
			fmt.Fprintf(w, "::error file=%s,title=%s::%s\n", ghProp(l.File), ghProp("traceforge "+liveType(l)), ghData(liveText(l)))
		} else if l.ByPolicy || len(l.Classes) > 0 {
			notes := l.Notes
			if cl := classLine(l); cl != "" {
				notes = append([]string{cl}, notes...)
			}
			fmt.Fprintf(w, "::notice file=%s,title=%s::%s\n", ghProp(l.File), ghProp("traceforge live"), ghData(strings.Join(notes, "\n")))
		}
	}
	fmt.Fprintln(w, r.summary(style{}))
	if r.Totals != nil {
		fmt.Fprintln(w, r.Totals.Line())
	}
	return nil
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
