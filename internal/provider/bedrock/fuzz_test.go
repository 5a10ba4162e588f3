package bedrock

import (
	"bytes"
	"errors"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// FuzzAssemble feeds arbitrary bytes, cut at an arbitrary point, to the
// frame reader and the ConverseStream assembler: they never panic, every
// error wraps one of the provider's sentinels, and an assembled body
// synthesizes to a stream that assembles to the same body.
func FuzzAssemble(f *testing.F) {
	for _, s := range []string{toolAnswer,
		`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"s"}}},{"text":"42"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}`} {
		body, err := provider.Decode([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		if err := NewConverse().SynthesizeStream(body, false, &b, nil); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes(), uint16(0))
		f.Add(b.Bytes(), uint16(13))
		corrupt := append([]byte{}, b.Bytes()...)
		corrupt[len(corrupt)/2] ^= 1
		f.Add(corrupt, uint16(5))
	}
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0}, uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		a := NewConverse().NewAssembler()
		at := int(cut)
		if at > len(data) {
			at = len(data)
		}
		_, _ = a.Write(data[:at])
		_, _ = a.Write(data[at:])
		body, err := a.Done()
		if err != nil {
			if !errors.Is(err, provider.ErrMalformed) && !errors.Is(err, provider.ErrBrokenStream) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		var b bytes.Buffer
		if err := NewConverse().SynthesizeStream(body, false, &b, nil); err != nil {
			return // an assembled body the replay cannot carry is refused, not mangled
		}
		a2 := NewConverse().NewAssembler()
		_, _ = a2.Write(b.Bytes())
		again, err := a2.Done()
		if err != nil {
			t.Fatalf("synthesized stream does not assemble: %v", err)
		}
		x, _ := provider.Marshal(body)
		y, _ := provider.Marshal(again)
		if !bytes.Equal(x, y) {
			t.Fatalf("round trip differs:\n%s\n%s", x, y)
		}
	})
}
