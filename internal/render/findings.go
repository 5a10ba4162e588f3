package render

import (
	"fmt"
	"io"

	"github.com/traceforge/traceforge/internal/finding"
)

// WriteFindingLines writes the error findings of a set that refuses to be
// used, one per line ("❌ FILE: POINTER: MESSAGE [RULE]", then "   → FIX"),
// naming each file under dir, redacted.
func WriteFindingLines(w io.Writer, dir string, fs finding.Findings) error {
	rw := NewRedactor(w)
	for _, f := range fs {
		loc := joinDir(dir, f.File)
		if f.Pointer != "" {
			loc += ": " + f.Pointer
		}
		fmt.Fprintf(rw, "❌ %s: %s [%s]\n", loc, f.Message, f.Rule)
		if f.Fix != "" {
			fmt.Fprintf(rw, "   → %s\n", f.Fix)
		}
	}
	return rw.Flush()
}
