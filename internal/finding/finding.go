// Package finding is traceforge's one result model: every problem (or note)
// that check, record and migrate report is a Finding, rendered by
// internal/render in every output format.
package finding

import (
	"fmt"
	"strings"
)

// Severity of a finding.
type Severity int

// Severities.
const (
	Error Severity = iota // fails the run
	Note                  // reported, never fails by itself
)

func (s Severity) String() string {
	if s == Note {
		return "note"
	}
	return "error"
}

// Finding is one problem (or note) about one file of a snapshot set, or
// about one call or legacy record that concerns such a file.
type Finding struct {
	// File is the path relative to the snapshot folder (slash-separated,
	// e.g. openai/0123456789ab.json; "" for the folder itself); renderers
	// add the folder's display name.
	File     string   `json:"file"`
	Pointer  string   `json:"pointer,omitempty"` // JSON pointer inside the file
	Rule     string   `json:"rule"`              // stable rule name, e.g. record-hash
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"` // what to do about it
	Severity Severity `json:"-"`
	// Verbatim, when set, is printed by text reports instead of the usual
	// layout (the specification's exact multi-line messages).
	Verbatim string `json:"-"`

	// Subject names what the finding is about when that is not just a
	// file: a call ("POST /v1/chat/completions from app.py:12:main") or a
	// legacy record (`#2 "sum-3"`).
	Subject string `json:"-"`
	ID      string `json:"-"` // the snapshot id of the call, when it has one
	Key     string `json:"-"` // the full request key of the call, when it has one
	// Details are one line per failed check or differing field.
	Details []string `json:"-"`
	// Count is how many identical calls ended this way (0 and 1 = once).
	Count int `json:"-"`
	// Outcome says what became of the subject, for reports that head
	// findings by it (record: "refused", "not snapshotted", …).
	Outcome string `json:"-"`
}

// Error gives a Finding the error interface (the folder is not named:
// File is relative to it).
func (f Finding) Error() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Pointer != "" {
		b.WriteString(": " + f.Pointer)
	}
	fmt.Fprintf(&b, ": %s [%s]", f.Message, f.Rule)
	return b.String()
}

// Findings is a list of findings.
type Findings []Finding

// Errors counts the findings that fail.
func (fs Findings) Errors() int {
	n := 0
	for _, f := range fs {
		if f.Severity == Error {
			n++
		}
	}
	return n
}
