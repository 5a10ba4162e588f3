package responses_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider/openai/responses"
)

// BenchmarkSynthesizeStream: the replay stream of a ~100 KB Responses
// answer, against the floor of writing the same bytes precomputed.
func BenchmarkSynthesizeStream(b *testing.B) {
	body := decode(b, string(read(b, "text.json")))
	part := body["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)
	part["text"] = strings.Repeat("traceforge replays Responses streams. ", 2700)
	f := responses.New()
	var pre bytes.Buffer
	if err := f.SynthesizeStream(body, false, &pre, nil); err != nil {
		b.Fatal(err)
	}
	b.Run("synthesize", func(b *testing.B) {
		b.SetBytes(int64(pre.Len()))
		for b.Loop() {
			if err := f.SynthesizeStream(body, false, io.Discard, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("floor", func(b *testing.B) {
		b.SetBytes(int64(pre.Len()))
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			out.Write(pre.Bytes())
		}
	})
}
