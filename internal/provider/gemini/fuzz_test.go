package gemini_test

import (
	"bytes"
	"testing"

	"github.com/traceforge/traceforge/internal/provider/formattest"
	"github.com/traceforge/traceforge/internal/provider/gemini"
)

// FuzzAssembler: the stream assembler never panics, its result does not
// depend on how the stream is cut, and a stream that assembles into a body
// with Fields survives SynthesizeStream → Assembler unchanged.
func FuzzAssembler(f *testing.F) {
	seed := fixture(f, "generate_tool.sse")
	f.Add(seed, uint16(7))
	f.Add(bytes.ReplaceAll(seed, []byte("\r\n"), []byte("\n")), uint16(1))
	f.Add([]byte("data: {\"candidates\":[{\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"totalTokenCount\":1}}\n\n"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		formattest.CheckStream(t, gemini.NewGenerate(), data, split)
	})
}

// FuzzParsePath: ParsePath never panics, and a parsed path's endpoint
// parses back to the same model and version.
func FuzzParsePath(f *testing.F) {
	for _, p := range []string{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "/x/v1/models/m:embedContent", "/v1alpha/models/a:b:c"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, ok := gemini.ParsePath(path)
		if !ok {
			return
		}
		q, ok := gemini.ParsePath(string(p.Endpoint()))
		if !ok || q.Model != p.Model || q.Version != p.Version {
			t.Fatalf("%q → %q does not parse back (%+v, %v)", path, p.Endpoint(), q, ok)
		}
	})
}
