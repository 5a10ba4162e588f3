package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
)

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

// junitCases builds one test case per snapshot file (and per other file with
// findings) carrying its static findings, its live result and, with
// --fail-on-unused, its unused failure; then one test case per unmatched
// request and per replay error.
func (r report) junitCases() []junitCase {
	ix := r.index()
	byFile, live, unused, synth, files := ix.findings, ix.live, ix.unused, ix.synth, ix.files
	via := map[string]result.NormalizedMatch{}
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
				text += "\nclosest snapshots:\n" + nearText(m, style{}) + "\ndiff against " + m.Closest + ":\n" + m.Diff
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
		cases = append(cases, junitCase{Name: missTitle(m), Classname: "traceforge.replay", File: m.Closest,
			Failures: []junitFailure{{Message: msg, Type: "drift", Text: text}}})
	}
	for _, e := range r.ReplayErrors {
		cases = append(cases, junitCase{Name: "replay error", Classname: "traceforge.replay",
			Failures: []junitFailure{{Message: e, Type: "replay", Text: e}}})
	}
	for _, b := range r.Bypassed {
		cases = append(cases, junitCase{Name: b.Method + " " + b.Target, Classname: "traceforge.bypass",
			Failures: []junitFailure{{Message: bypassLine(b), Type: "bypass", Text: bypassLine(b) + "\nfix: " + b.Hint}}})
	}
	return cases
}

func (r report) writeJUnit(w io.Writer) error {
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
