package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
)

// WireBudget is the most a streamed snapshot's file may weigh, as a
// multiple of its request JSON plus the stream's bytes (DESIGN §13.4).
const WireBudget = 1.5

// WireRow is the size of one streamed snapshot, which holds the stream's
// events as sent (response.wire), against the bytes it records.
type WireRow struct {
	Name        string
	Events      int
	Request     int // request JSON bytes
	Stream      int // stream bytes the application read
	File        int // snapshot file bytes
	WireEncoded int // bytes of the file's "wire" member alone
}

// Ratio is File / (Request + Stream).
func (w WireRow) Ratio() float64 { return float64(w.File) / float64(w.Request+w.Stream) }

// wireCase is one streamed call of the size rows: a long answer or tool
// calls, in each SSE wire format.
type wireCase struct {
	name, path string
	body       map[string]any
	hdr        map[string]string
}

func wireCases() []wireCase {
	long := strings.TrimSpace(strings.Repeat("Snapshot testing keeps every recorded answer of the model in Git. ", 60))
	tool := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Current weather of a city",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}}}
	anthropicTool := []any{map[string]any{"name": "get_weather", "description": "Current weather of a city",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}}
	// A tool whose call streams as a few hundred argument deltas, as an
	// agent's write_file or SQL tool does (the fake fills every argument).
	props := map[string]any{}
	for i := 1; i <= 60; i++ {
		props[fmt.Sprintf("paragraph_%02d", i)] = map[string]any{"type": "string"}
	}
	wideTool := []any{map[string]any{"type": "function", "function": map[string]any{"name": "write_report", "parameters": map[string]any{"type": "object", "properties": props}}}}
	anthropicWideTool := []any{map[string]any{"name": "write_report", "input_schema": map[string]any{"type": "object", "properties": props}}}
	msgs := func(s string) []any { return []any{map[string]any{"role": "user", "content": s}} }
	ah := map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "bench"}
	return []wireCase{
		{"OpenAI chat, long answer", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "temperature": 0, "seed": 1, "max_tokens": 4096, "stream": true, "stream_options": map[string]any{"include_usage": true}, "messages": msgs(long)}, nil},
		{"OpenAI chat, two tool calls", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "temperature": 0, "seed": 1, "max_tokens": 256, "stream": true, "stream_options": map[string]any{"include_usage": true}, "tools": tool, "messages": msgs("Weather in Paris and Rome, both?")}, nil},
		{"OpenAI chat, long tool call", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "temperature": 0, "seed": 1, "max_tokens": 4096, "stream": true, "stream_options": map[string]any{"include_usage": true}, "tools": wideTool, "messages": msgs("Write the report on Lisbon")}, nil},
		{"Anthropic, long answer", "/v1/messages", map[string]any{"model": "claude-sonnet-4-5", "temperature": 0, "max_tokens": 4096, "stream": true, "messages": msgs(long)}, ah},
		{"Anthropic, tool call", "/v1/messages", map[string]any{"model": "claude-sonnet-4-5", "temperature": 0, "max_tokens": 256, "stream": true, "tools": anthropicTool, "messages": msgs("What is the weather in Paris?")}, ah},
		{"Anthropic, long tool call", "/v1/messages", map[string]any{"model": "claude-sonnet-4-5", "temperature": 0, "max_tokens": 4096, "stream": true, "tools": anthropicWideTool, "messages": msgs("Write the report on Lisbon")}, ah},
		{"Responses, long answer", "/v1/responses", map[string]any{"model": "gpt-4o-mini", "temperature": 0, "max_output_tokens": 4096, "stream": true, "input": long}, nil},
		{"Gemini, long answer", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": long}}}}, "generationConfig": map[string]any{"temperature": 0, "seed": 1, "maxOutputTokens": 4096}}, map[string]string{"x-goog-api-key": "bench"}},
	}
}

// runWire records each wire case through a recorder in front of the fake
// upstream (in process: sizes, not speed) and weighs the snapshot it wrote.
func runWire(cfg *Config) ([]WireRow, error) {
	fake := httptest.NewServer(fakeupstream.New(fakeupstream.Options{}))
	defer fake.Close()
	var rows []WireRow
	for i, c := range wireCases() {
		dir := filepath.Join(cfg.Work, "wire", fmt.Sprint(i), ".ai-snapshots")
		if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
			return nil, err
		}
		rec, err := record.New(record.Config{Dir: dir, Display: ".ai-snapshots", ManifestInterval: -1,
			Upstreams: map[provider.Name]string{provider.OpenAI: fake.URL + "/v1", provider.Anthropic: fake.URL, provider.Gemini: fake.URL}})
		if err != nil {
			return nil, err
		}
		srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
		reqJSON, _ := json.Marshal(c.body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+c.path, bytes.NewReader(reqJSON))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Traceforge-Source", "bench/harness/wire.go:1:runWire")
		req.Header.Set("Authorization", "Bearer bench")
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			srv.Close()
			return nil, err
		}
		stream, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get(provider.HeaderSnapshotID)
		srv.Close()
		sum := rec.Finish()
		if err != nil || resp.StatusCode != 200 || sum.Failed() || id == "" {
			return nil, fmt.Errorf("%s: status %d, %v, run failed = %v", c.name, resp.StatusCode, err, sum.Failed())
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "*", id+".json"))
		if len(matches) != 1 {
			return nil, fmt.Errorf("%s: snapshot %s not written", c.name, id)
		}
		file, err := os.ReadFile(matches[0])
		if err != nil {
			return nil, err
		}
		row := WireRow{Name: c.name, Request: len(reqJSON), Stream: len(stream), File: len(file)}
		if i := bytes.Index(file, []byte(`"wire": {`)); i >= 0 {
			if j := bytes.Index(file[i:], []byte("\n        }")); j >= 0 {
				row.WireEncoded = j + len("\n        }")
			}
			row.Events = bytes.Count(file[i:], []byte(`{"ms": `))
		}
		if row.Events == 0 {
			return nil, fmt.Errorf("%s: the snapshot holds no wire events", c.name)
		}
		cfg.logf("wire %s: %d events, request %d B + stream %d B → file %d B (%.2f×)", c.name, row.Events, row.Request, row.Stream, row.File, row.Ratio())
		rows = append(rows, row)
	}
	return rows, nil
}

// wireFixedFloor is the stream size below which a row carries no target: a
// snapshot also holds its request (indented), the derived fields (content,
// tool_calls, usage) and two hashes — 2 to 3 KB whatever the stream — so a
// stream of a few events weighs more than 1.5× its own bytes by
// construction. The rows below it are shown, not judged.
const wireFixedFloor = 16 << 10

// wireTargets: every streamed snapshot of a stream of at least
// wireFixedFloor bytes within the budget.
func (r *Results) wireTargets() []Target {
	var ts []Target
	for _, w := range r.Wire {
		if w.Stream < wireFixedFloor {
			continue
		}
		ts = append(ts, Target{Name: "streamed snapshot size, " + w.Name + " (file / (request JSON + stream bytes))", Want: fmt.Sprintf("≤ %.1f×", WireBudget), Got: fmt.Sprintf("%.2f× (%d B / %d B)", w.Ratio(), w.File, w.Request+w.Stream), Met: w.Ratio() <= WireBudget})
	}
	return ts
}

// wireMarkdown renders the size table.
func (r *Results) wireMarkdown(p func(string, ...any)) {
	if len(r.Wire) == 0 {
		return
	}
	p("")
	p("### Streamed snapshot size (format 1.2.0 keeps the stream's events as sent, `response.wire`; recorded in process through `record` in front of the fake upstream)")
	p("")
	p("| stream | events | request JSON | stream bytes | snapshot file | of which `wire` | file / (request + stream) |")
	p("|---|---:|---:|---:|---:|---:|---:|")
	for _, w := range r.Wire {
		p("| %s | %d | %d B | %d B | %d B | %d B | %.2f× |", w.Name, w.Events, w.Request, w.Stream, w.File, w.WireEncoded, w.Ratio())
	}
	p("")
	p("Streams under %d KiB carry no target: besides the events a snapshot holds the request (indented), the derived fields (content, tool_calls, usage) and two hashes, 2 to 3 KB whatever the stream, so a stream of a dozen events weighs more than %.1f× its bytes by construction; their `wire` member alone is shown.", wireFixedFloor>>10, WireBudget)
}
