package record_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/traceforge/traceforge/internal/record"
)

// TestMain runs every test of the package with each written file checked
// twice (record.CheckAgainstFull): the recorder's shortcuts — checking the
// document it encoded (snapshot.AsDecoded) instead of the file decoded
// back, and taking the key, lineage and record hash it computed instead of
// recomputing them — must find exactly what the full check of the decoded
// file finds, on every call every test records (every format, streams,
// chains, key normalizers, refusals).
//
// No test reaches an instance metadata endpoint: Bedrock's re-signing
// loads traceforge's AWS credentials through the default chain, which
// would ask one when no credential is set.
func TestMain(m *testing.M) {
	_ = os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	differences := record.CheckAgainstFull()
	code := m.Run()
	if d := differences(); len(d) > 0 {
		for _, line := range d {
			fmt.Fprintln(os.Stderr, "record's check differs from the full check:", line)
		}
		code = 1
	}
	os.Exit(code)
}
