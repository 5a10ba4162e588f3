package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/finding"
)

// GitHub workflow command escaping.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func (r report) writeGitHub(w io.Writer) error {
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
		text := missTitle(m) + "\n" + m.Reason
		if m.Key != "" {
			text = missTitle(m) + "\nkey " + m.Key
			if len(m.Near) > 0 {
				text += "\nclosest snapshots:\n" + nearText(m, style{}) + "\ndiff against " + m.Closest + ":"
			}
			text += "\n" + m.Diff
		}
		fmt.Fprintf(w, "::error %s::%s\n", props, ghData(text))
	}
	for _, e := range r.ReplayErrors {
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProp("traceforge replay"), ghData(e))
	}
	for _, b := range r.Bypassed {
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProp("traceforge bypass"), ghData(bypassLine(b)+"\nfix: "+b.Hint))
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
		fmt.Fprintln(w, TotalsLine(*r.Totals))
	}
	return nil
}
