// Package check is the one check pipeline — schema, version, hashes, ids,
// determinism policy, lineage and the secret scan — that record, verify,
// migrate and the Go package all call. Nothing else re-implements a rule.
package check

import (
	"fmt"
	"strings"
)

// Severity of a finding.
type Severity int

// Severities.
const (
	Error Severity = iota // fails verify
	Note                  // reported, never fails by itself
)

func (s Severity) String() string {
	if s == Note {
		return "note"
	}
	return "error"
}

// Rule names (stable: they appear in JSON reports and the docs).
const (
	RuleJSON            = "json"
	RuleSchema          = "schema"
	RuleVersion         = "version"
	RuleRecordHash      = "record-hash"
	RuleFileHash        = "file-hash"
	RuleManifestHash    = "manifest-hash"
	RuleManifestMissing = "manifest-missing"
	RuleManifestEntry   = "manifest-entry"
	RuleMissingFile     = "missing-file"
	RuleNotInManifest   = "not-in-manifest"
	RuleID              = "id"
	RuleCollision       = "id-collision"
	RuleDeterminism     = "determinism"
	RuleSecret          = "secret"
	RuleLineage         = "lineage"
	RuleSource          = "source"
	RuleUnsafeFile      = "unsafe-file"
	RuleUnexpectedFile  = "unexpected-file"
	RuleMigration       = "unfinished-migration"
	RulePolicy          = "policy"
)

// Finding is one problem (or note) about one file of the set.
type Finding struct {
	File     string   `json:"file"`              // display path, e.g. .ai-snapshots/openai/0123456789ab.json
	Pointer  string   `json:"pointer,omitempty"` // JSON pointer inside the file
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
	Severity Severity `json:"-"`
	// Verbatim, when set, is printed by text reports instead of the usual
	// layout (the specification's exact multi-line messages).
	Verbatim string `json:"-"`
}

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

// Errors counts the findings that fail verification.
func (fs Findings) Errors() int {
	n := 0
	for _, f := range fs {
		if f.Severity == Error {
			n++
		}
	}
	return n
}

// FindingsError carries every finding as an error (Unwrap() []error).
type FindingsError struct{ Findings Findings }

func (e *FindingsError) Error() string {
	var parts []string
	for _, f := range e.Findings {
		if f.Severity == Error {
			parts = append(parts, f.Error())
		}
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns each error finding.
func (e *FindingsError) Unwrap() []error {
	var out []error
	for _, f := range e.Findings {
		if f.Severity == Error {
			out = append(out, f)
		}
	}
	return out
}
