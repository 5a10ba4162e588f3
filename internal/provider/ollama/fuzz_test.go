package ollama_test

import (
	"bytes"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/formattest"
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
		formattest.CheckStream(t, format, data, split)
	})
}
