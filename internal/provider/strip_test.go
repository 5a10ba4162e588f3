package provider_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// expectedStripped is the reference rewrite, built by plain string
// operations on the fixture (whose chunks carry `,"usage":null` or a
// usage-only chunk).
func expectedStripped(data, sep string) (out string, events int) {
	var b strings.Builder
	for _, ev := range strings.SplitAfter(data, sep) {
		if ev == "" {
			continue
		}
		if strings.Contains(ev, `"choices":[],`) && strings.Contains(ev, `"usage":{`) {
			continue
		}
		b.WriteString(strings.ReplaceAll(ev, `,"usage":null`, ""))
		events++
	}
	return b.String(), events
}

type flushRecorder struct {
	out     bytes.Buffer
	flushes []int // output length at each flush
}

func (r *flushRecorder) flush() { r.flushes = append(r.flushes, r.out.Len()) }

func TestUsageStripperFixtures(t *testing.T) {
	for _, name := range []string{"openai_chat_text", "openai_chat_tools", "openai_completions"} {
		t.Run(name, func(t *testing.T) {
			data := string(readFile(t, name+".sse"))
			if !strings.Contains(data, `"usage":null`) {
				t.Fatal("fixture has no usage members")
			}
			want, events := expectedStripped(data, "\n\n")
			for size := 1; size <= len(data); size += 1 + size/16 {
				var rec flushRecorder
				w := provider.NewUsageStripper(&rec.out, rec.flush)
				for i := 0; i < len(data); i += size {
					if _, err := w.Write([]byte(data[i:min(i+size, len(data))])); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got := rec.out.String()
				if got != want {
					t.Fatalf("size %d: got\n%s\nwant\n%s", size, got, want)
				}
				if strings.Contains(got, `"usage"`) {
					t.Fatal("usage left in output")
				}
				if len(rec.flushes) != events {
					t.Fatalf("size %d: %d flushes for %d events", size, len(rec.flushes), events)
				}
			}
			// The stripped stream is what a client without include_usage
			// gets: same content, no token counts.
			body, err := assemble(provider.OpenAI, endpointOf(name), []byte(want))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := extract(provider.OpenAI, endpointOf(name), body); !errors.Is(err, provider.ErrNoUsage) {
				t.Fatalf("Extract of stripped stream: %v", err)
			}
			full := loadBody(t, name)
			body["usage"] = full["usage"]
			if a, b := mustExtract(t, provider.OpenAI, endpointOf(name), body), mustExtract(t, provider.OpenAI, endpointOf(name), full); !provider.Equal(a, b) {
				t.Fatalf("stripped stream content differs: %v", provider.Diff(b, a))
			}
		})
	}
}

func endpointOf(fixture string) provider.Endpoint {
	if strings.Contains(fixture, "completions") {
		return provider.Completions
	}
	return provider.ChatCompletions
}

// Each event is forwarded, and flushed, the moment its blank line arrives.
func TestUsageStripperNoBuffering(t *testing.T) {
	data := string(readFile(t, "openai_chat_text.sse"))
	var rec flushRecorder
	w := provider.NewUsageStripper(&rec.out, rec.flush)
	var wantSoFar strings.Builder
	for _, ev := range strings.SplitAfter(data, "\n\n") {
		if ev == "" {
			continue
		}
		for i := 0; i < len(ev); i++ {
			if _, err := w.Write([]byte{ev[i]}); err != nil {
				t.Fatal(err)
			}
			if i < len(ev)-1 && rec.out.Len() != wantSoFar.Len() {
				t.Fatalf("output before the event was complete: %q", rec.out.String())
			}
		}
		part, n := expectedStripped(ev, "\n\n")
		wantSoFar.WriteString(part)
		if rec.out.String() != wantSoFar.String() {
			t.Fatalf("event not forwarded when complete:\n%q\nwant\n%q", rec.out.String(), wantSoFar.String())
		}
		if n == 1 && (len(rec.flushes) == 0 || rec.flushes[len(rec.flushes)-1] != rec.out.Len()) {
			t.Fatal("no flush after the event")
		}
	}
}

func TestUsageStripperLineEndings(t *testing.T) {
	data := string(readFile(t, "openai_chat_tools.sse"))
	for _, eol := range []string{"\r\n", "\r"} {
		conv := strings.ReplaceAll(data, "\n", eol)
		want, _ := expectedStripped(conv, eol+eol)
		for size := 1; size <= 64; size++ {
			var out bytes.Buffer
			w := provider.NewUsageStripper(&out, nil)
			for i := 0; i < len(conv); i += size {
				if _, err := w.Write([]byte(conv[i:min(i+size, len(conv))])); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("%q size %d: got\n%q\nwant\n%q", eol, size, out.String(), want)
			}
		}
	}
}

func TestUsageStripperPassThrough(t *testing.T) {
	// No usage member anywhere (and odd content): byte-identical, including
	// comments, [DONE], non-JSON data, an Azure content-filter chunk with
	// empty choices, and an incomplete trailing event written at Close.
	in := ": OPENROUTER PROCESSING\n\n" +
		"data: {\"choices\":[],\"prompt_filter_results\":[]}\n\n" +
		"data: {\"id\" : \"x\", \"choices\" : [ {\"delta\":{\"content\":\"usage\"}} ] }\n\n" +
		"event: ping\ndata: not json\n\n" +
		"data: [DONE]\n\n" +
		"data: {\"tail\""
	var out bytes.Buffer
	w := provider.NewUsageStripper(&out, nil)
	if _, err := w.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if out.String() != strings.TrimSuffix(in, "data: {\"tail\"") {
		t.Fatalf("before Close: %q", out.String())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Fatalf("got %q", out.String())
	}
}

func TestUsageStripperRewrites(t *testing.T) {
	cases := []struct{ in, want string }{
		// usage first, last, only; whitespace; nested and quoted "usage" kept
		{"data: {\"usage\":null,\"id\":\"a\"}\n\n", "data: {\"id\":\"a\"}\n\n"},
		{"data: {\"id\":\"a\", \"usage\" : null }\n\n", "data: {\"id\":\"a\" }\n\n"},
		{"data: {\"usage\":null}\n\n", "data: {}\n\n"},
		{"data: {\"x\":{\"usage\":1},\"s\":\"\\\"usage\\\":1\",\"usage\":null,\"y\":[{\"usage\":2}]}\n\n",
			"data: {\"x\":{\"usage\":1},\"s\":\"\\\"usage\\\":1\",\"y\":[{\"usage\":2}]}\n\n"},
		// usage on a chunk that carries choices is the provider's own
		// (sent without include_usage too, DESIGN §13.3): kept
		{"data: {\"choices\":[{\"index\":0}],\"usage\":{\"total_tokens\":3}}\n\n", "data: {\"choices\":[{\"index\":0}],\"usage\":{\"total_tokens\":3}}\n\n"},
		// Groq's x_groq.usage is nested: kept, as the top-level null goes
		{"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"x_groq\":{\"id\":\"req_1\",\"usage\":{\"total_tokens\":3}},\"usage\":null}\n\n",
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"x_groq\":{\"id\":\"req_1\",\"usage\":{\"total_tokens\":3}}}\n\n"},
		// usage-only chunk dropped; the comment-only event kept
		{"data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\n: x\n\n", ": x\n\n"},
		// other lines of the event kept, multi-line data joined
		{"id: 7\ndata: {\"a\":1,\ndata: \"usage\":null}\n\n", "id: 7\ndata: {\"a\":1}\n\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		w := provider.NewUsageStripper(&out, nil)
		if _, err := w.Write([]byte(c.in)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, out.String(), c.want)
		}
	}
}

type failWriter struct{}

var errWrite = errors.New("client gone")

func (failWriter) Write(p []byte) (int, error) { return 0, errWrite }

func TestUsageStripperWriteError(t *testing.T) {
	w := provider.NewUsageStripper(failWriter{}, nil)
	if _, err := w.Write([]byte("data: {}\n\n")); !errors.Is(err, errWrite) {
		t.Fatalf("err = %v", err)
	}
	if _, err := w.Write([]byte("data: {}\n\n")); !errors.Is(err, errWrite) {
		t.Fatalf("error not sticky: %v", err)
	}
}
