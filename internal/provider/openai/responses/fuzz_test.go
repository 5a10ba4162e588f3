package responses_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/openai/responses"
)

// FuzzAssembler: any byte stream, in any chunking, either assembles to a
// response object or fails with one of the wire layer's errors — never a
// panic; an assembled response that has fields synthesizes a stream that
// assembles back to the same fields.
func FuzzAssembler(f *testing.F) {
	for _, name := range fixtures {
		f.Add(read(f, name+".sse"), uint8(7))
	}
	f.Add([]byte("event: response.completed\ndata: {\"response\":{\"status\":\"completed\",\"output\":[],\"usage\":{\"total_tokens\":1}}}\n\n"), uint8(1))
	f.Add([]byte("data: [DONE]\n\nevent: error\ndata: {}\n\n"), uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		body, err := assemble(t, stream, int(chunk)+1)
		if err != nil {
			if !errors.Is(err, provider.ErrBrokenStream) && !errors.Is(err, provider.ErrMalformed) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		fmt := responses.New()
		fields, err := fmt.Fields(body)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := fmt.SynthesizeStream(body, false, &out, nil); err != nil {
			return
		}
		back, err := assemble(t, out.Bytes(), 1<<20)
		if err != nil {
			t.Fatalf("a synthesized stream does not assemble: %v", err)
		}
		again, err := fmt.Fields(back)
		if err != nil || len(provider.Diff(fields, again)) > 0 {
			t.Fatalf("round trip changed the fields: %v %v", err, provider.Diff(fields, again))
		}
	})
}
