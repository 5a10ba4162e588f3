// Package formattest holds what the tests of wire formats share: decoding
// fixtures, canonical JSON for comparisons, and feeding a stream to a
// format's assembler in chunks of a given size.
package formattest

import (
	"bytes"
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

// CheckStream is the fuzz property of a stream assembler: it never panics,
// its result does not depend on how the stream is cut (whole vs chunks of
// split%64+1 bytes), and a stream that assembles into a body with Fields
// survives SynthesizeStream → Assembler unchanged.
func CheckStream(t *testing.T, f provider.Format, data []byte, split uint16) {
	t.Helper()
	whole, errWhole := Assemble(f, data, len(data)+1)
	parts, errParts := Assemble(f, data, int(split%64)+1)
	if (errWhole == nil) != (errParts == nil) {
		t.Fatalf("the split changes the outcome: %v vs %v", errWhole, errParts)
	}
	if errWhole != nil {
		return
	}
	if Canon(t, whole) != Canon(t, parts) {
		t.Fatalf("the split changes the body:\n%s\n%s", Canon(t, whole), Canon(t, parts))
	}
	if _, err := f.Fields(whole); err != nil {
		return
	}
	var out bytes.Buffer
	if err := f.SynthesizeStream(whole, false, &out, nil); err != nil {
		t.Fatalf("SynthesizeStream of an assembled body: %v", err)
	}
	again, err := Assemble(f, out.Bytes(), 5)
	if err != nil {
		t.Fatalf("assembling the synthesized stream: %v\n%s", err, out.String())
	}
	if Canon(t, again) != Canon(t, whole) {
		t.Fatalf("round trip changed the body:\n%s\n%s\n%s", Canon(t, whole), Canon(t, again), out.String())
	}
}
