package record_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/traceforge/traceforge/internal/record"
)

// TestMain runs every test of the package with each written file checked
// twice (record.CheckBuiltAgainstFull): the recorder's shortcut — taking
// the key, lineage and record hash it computed instead of recomputing them
// from the decoded file — must find exactly what the full check finds, on
// every call every test records (every format, streams, chains, key
// normalizers, refusals).
func TestMain(m *testing.M) {
	differences := record.CheckBuiltAgainstFull()
	code := m.Run()
	if d := differences(); len(d) > 0 {
		for _, line := range d {
			fmt.Fprintln(os.Stderr, "check with Built differs:", line)
		}
		code = 1
	}
	os.Exit(code)
}
