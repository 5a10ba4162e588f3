package ollama_test

import (
	"bytes"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/ollama"
)

// FuzzAssembler: the NDJSON assemblers never panic, their result does not
// depend on how the stream is cut, and a stream that assembles into a body
// with Fields survives SynthesizeStream → Assembler unchanged.
func FuzzAssembler(f *testing.F) {
	for _, name := range []string{"chat_tool.ndjson", "generate.ndjson"} {
		data := fixture(f, name)
		f.Add(data, uint16(7), name == "chat_tool.ndjson")
		f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), uint16(1), name == "chat_tool.ndjson")
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16, chat bool) {
		var format provider.Format = ollama.NewGenerate()
		if chat {
			format = ollama.NewChat()
		}
		whole, errWhole := assemble(t, format, data, len(data)+1)
		parts, errParts := assemble(t, format, data, int(split%64)+1)
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("the split changes the outcome: %v vs %v", errWhole, errParts)
		}
		if errWhole != nil {
			return
		}
		if canon(t, whole) != canon(t, parts) {
			t.Fatalf("the split changes the body:\n%s\n%s", canon(t, whole), canon(t, parts))
		}
		if _, err := format.Fields(whole); err != nil {
			return
		}
		var out bytes.Buffer
		if err := format.SynthesizeStream(whole, false, &out, nil); err != nil {
			t.Fatalf("SynthesizeStream of an assembled body: %v", err)
		}
		again, err := assemble(t, format, out.Bytes(), 5)
		if err != nil {
			t.Fatalf("assembling the synthesized stream: %v", err)
		}
		if canon(t, again) != canon(t, whole) {
			t.Fatalf("round trip changed the body:\n%s\n%s\n%s", canon(t, whole), canon(t, again), out.String())
		}
	})
}
