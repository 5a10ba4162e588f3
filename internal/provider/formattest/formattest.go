// Package formattest holds what the tests of wire formats share: decoding
// fixtures, canonical JSON for comparisons, and feeding a stream to a
// format's assembler in chunks of a given size.
package formattest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Decode parses one JSON object the way the formats see bodies (numbers as
// json.Number); a parse error fails the test.
func Decode(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := provider.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Fixture reads testdata/name.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Canon is the RFC 8785 text of v: equal values give equal strings.
func Canon(t testing.TB, v any) string {
	t.Helper()
	b, err := snapshot.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Assemble feeds stream to a fresh assembler of f in chunks of chunk bytes
// and returns its result.
func Assemble(f provider.Format, stream []byte, chunk int) (map[string]any, error) {
	a := f.NewAssembler()
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		if _, err := a.Write(stream[:n]); err != nil {
			return nil, err
		}
		stream = stream[n:]
	}
	return a.Done()
}
