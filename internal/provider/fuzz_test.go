package provider_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

func seedStreams(f *testing.F, prefix string) {
	files, err := filepath.Glob(filepath.Join("testdata", prefix+"*.sse"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files for %s: %v", prefix, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint16(7))
		f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), uint16(1))
	}
}

// fuzzAssembler checks that an assembler never panics, that the result does
// not depend on how the stream is cut, and that a stream that assembles and
// extracts survives SynthesizeStream → Assembler → Extract unchanged.
func fuzzAssembler(t *testing.T, p provider.Name, e provider.Endpoint, data []byte, split uint16) {
	whole, errWhole := assemble(p, e, data)
	size := int(split%64) + 1
	parts, errParts := assemble(p, e, data, size, size*3+1)
	if (errWhole == nil) != (errParts == nil) || (errWhole != nil && errWhole.Error() != errParts.Error()) {
		t.Fatalf("split %d changes the error: %v vs %v", size, errWhole, errParts)
	}
	if errWhole != nil {
		return
	}
	if canonical(whole) != canonical(parts) {
		t.Fatalf("split %d changes the body:\n%s\n%s", size, canonical(whole), canonical(parts))
	}
	f, err := extract(p, e, whole)
	if err != nil {
		return
	}
	for _, includeUsage := range []bool{true, false} {
		var sse bytes.Buffer
		if err := synthesizeStream(p, e, whole, includeUsage, &sse, nil); err != nil {
			t.Fatalf("SynthesizeStream of an assembled body: %v", err)
		}
		again, err := assemble(p, e, sse.Bytes(), size)
		if err != nil {
			t.Fatalf("assembling a synthesized stream: %v\n%s", err, sse.Bytes())
		}
		if p == provider.OpenAI && !includeUsage {
			again["usage"] = whole["usage"]
		}
		g, err := extract(p, e, again)
		if err != nil {
			t.Fatalf("Extract after round trip: %v", err)
		}
		if !provider.Equal(f, g) {
			t.Fatalf("round trip changed fields: %v", provider.Diff(f, g))
		}
	}
}

func FuzzOpenAIAssembler(f *testing.F) {
	seedStreams(f, "openai_")
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}],\"usage\":{\"total_tokens\":1}}\n\n"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		fuzzAssembler(t, provider.OpenAI, provider.ChatCompletions, data, split)
		fuzzAssembler(t, provider.OpenAI, provider.Completions, data, split)
	})
}

func FuzzAnthropicAssembler(f *testing.F) {
	seedStreams(f, "anthropic_")
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		fuzzAssembler(t, provider.Anthropic, provider.Messages, data, split)
	})
}

func FuzzUsageStripper(f *testing.F) {
	seedStreams(f, "openai_")
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		run := func(size int) string {
			var out bytes.Buffer
			w := provider.NewUsageStripper(&out, nil)
			for i := 0; i < len(data); i += size {
				if _, err := w.Write(data[i:min(i+size, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return out.String()
		}
		whole := run(len(data) + 1)
		if parts := run(int(split%64) + 1); parts != whole {
			t.Fatalf("split changes the output:\n%q\n%q", whole, parts)
		}
		if !bytes.Contains(data, []byte("usage")) && whole != string(data) {
			t.Fatalf("stream without usage changed:\n%q\n%q", data, whole)
		}
	})
}
