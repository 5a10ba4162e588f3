package verify

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

// call is one application call of the test table.
type call struct {
	name     string
	provider provider.Name
	path     string
	body     map[string]any
	headers  map[string]string
}

func (c call) stream() bool { s, _ := c.body["stream"].(bool); return s }

// format is the wire format of the call's path.
func (c call) format() provider.Format {
	f, _, _ := registry.Route("POST", c.path)
	return f
}

func (c call) source(i int) source.Source {
	return source.Source{File: "app/main.go", Line: 10 + i, Function: strings.ReplaceAll(c.name, "-", "_")}
}

func (c call) sourceHeader(i int) string { return c.source(i).String() }

var weatherTool = map[string]any{"type": "function", "function": map[string]any{
	"name": "get_weather", "description": "Current weather of a city",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
}}

var anthropicWeatherTool = map[string]any{"name": "get_weather", "description": "Current weather of a city",
	"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}

func openaiChat(prompt string, extra map[string]any) map[string]any {
	m := map[string]any{
		"model": "gpt-4o-mini",
		"messages": []any{
			map[string]any{"role": "system", "content": "You are terse."},
			map[string]any{"role": "user", "content": prompt},
		},
		"temperature": 0, "seed": 7, "max_tokens": 50,
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func anthropicMsg(prompt string, extra map[string]any) map[string]any {
	m := map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 64, "temperature": 0,
		"system":   "Answer briefly.",
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

var anthropicHeaders = map[string]string{"anthropic-version": "2023-06-01"}

// table is every kind of call replay must reproduce.
func table() []call {
	stream := map[string]any{"stream": true}
	streamUsage := map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}
	return []call{
		{"openai-plain", provider.OpenAI, "/v1/chat/completions", openaiChat("Summarize: traceforge records LLM calls", nil), nil},
		{"openai-stream", provider.OpenAI, "/v1/chat/completions", openaiChat("Stream a summary of snapshot testing", streamUsage), nil},
		{"openai-stream-no-usage", provider.OpenAI, "/v1/chat/completions", openaiChat("Stream without usage please", stream), nil},
		{"openai-tools", provider.OpenAI, "/v1/chat/completions", openaiChat("What is the weather in Paris?", map[string]any{"tools": []any{weatherTool}}), nil},
		{"openai-tools-stream", provider.OpenAI, "/v1/chat/completions", openaiChat("What is the weather in Berlin?", map[string]any{"tools": []any{weatherTool}, "stream": true, "stream_options": map[string]any{"include_usage": true}}), nil},
		{"openai-completions", provider.OpenAI, "/v1/completions", map[string]any{"model": "gpt-3.5-turbo-instruct", "prompt": "Say hello to the tests", "temperature": 0, "seed": 1, "max_tokens": 20}, nil},
		{"anthropic-plain", provider.Anthropic, "/v1/messages", anthropicMsg("Why snapshot LLM calls?", nil), anthropicHeaders},
		{"anthropic-stream", provider.Anthropic, "/v1/messages", anthropicMsg("Stream why replay matters", stream), anthropicHeaders},
		{"anthropic-tools", provider.Anthropic, "/v1/messages", anthropicMsg("What is the weather in Rome?", map[string]any{"tools": []any{anthropicWeatherTool}}), anthropicHeaders},
		{"anthropic-tools-stream", provider.Anthropic, "/v1/messages", anthropicMsg("What is the weather in Oslo?", map[string]any{"tools": []any{anthropicWeatherTool}, "stream": true}), anthropicHeaders},
	}
}

func marshalJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// send posts body to base+path with the call's headers plus extra.
func send(t testing.TB, base string, c call, body map[string]any, extra map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+c.path, bytes.NewReader(marshalJSON(t, body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.provider == provider.Anthropic {
		req.Header.Set("x-api-key", "sk-ant-test")
	} else {
		req.Header.Set("Authorization", "Bearer sk-test")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// answer turns an answer into the provider's non-streamed body, assembling
// a stream with the format's assembler.
func answer(t testing.TB, c call, data []byte) map[string]any {
	t.Helper()
	if c.stream() {
		a := c.format().NewAssembler()
		if _, err := a.Write(data); err != nil {
			t.Fatalf("%s: assemble: %v", c.name, err)
		}
		body, err := a.Done()
		if err != nil {
			t.Fatalf("%s: assemble: %v\n%s", c.name, err, data)
		}
		return body
	}
	body, err := provider.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.name, err, data)
	}
	return body
}

// appView is what an application sees of an answer: the one equality's
// fields, or for a stream without usage its content, finish reason and tools.
func appView(t testing.TB, c call, body map[string]any) snapshot.Fields {
	t.Helper()
	f, err := c.format().Fields(body)
	if err == nil {
		return f
	}
	if !strings.Contains(err.Error(), provider.ErrNoUsage.Error()) {
		t.Fatalf("%s: extract: %v", c.name, err)
	}
	cp := map[string]any{}
	for k, v := range body {
		cp[k] = v
	}
	cp["usage"] = map[string]any{"total_tokens": json.Number("0"), "input_tokens": json.Number("0")}
	f, err = c.format().Fields(cp)
	if err != nil {
		t.Fatalf("%s: extract: %v", c.name, err)
	}
	f.Usage = nil
	return f
}

// recorded is the outcome of recording the table through the fake upstream.
type recorded struct {
	dir      string            // the snapshot folder
	upstream []snapshot.Fields // what the application saw from the upstream, per call
}

// recordTable sends every call to the upstream (asking OpenAI streams for
// usage, as the record proxy does) and writes one snapshot per call. The
// application-visible answers are returned per call.
func recordTable(t testing.TB, up *fakeupstream.Server, calls []call, more ...snapshottest.Item) recorded {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	rec := recorded{dir: dir}
	var items []snapshottest.Item
	for i, c := range calls {
		sendBody := c.body
		askedUsage := false
		if so, ok := c.body["stream_options"].(map[string]any); ok {
			askedUsage, _ = so["include_usage"].(bool)
		}
		if c.provider == provider.OpenAI && c.stream() && !askedUsage {
			sendBody = map[string]any{}
			for k, v := range c.body {
				sendBody[k] = v
			}
			sendBody["stream_options"] = map[string]any{"include_usage": true}
		}
		resp, data := send(t, up.URL, c, sendBody, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: upstream %d: %s", c.name, resp.StatusCode, data)
		}
		body := answer(t, c, data)
		f, err := c.format().Fields(body)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		view := f
		if c.stream() && c.provider == provider.OpenAI && !askedUsage {
			view.TokensUsed, view.Usage = 0, nil
		}
		rec.upstream = append(rec.upstream, view)
		req, err := provider.Decode(marshalJSON(t, c.body))
		if err != nil {
			t.Fatal(err)
		}
		var hdr map[string]any
		for k, v := range c.headers {
			if hdr == nil {
				hdr = map[string]any{}
			}
			hdr[k] = v
		}
		items = append(items, snapshottest.Item{
			Provider: string(c.provider), Endpoint: c.format().Endpoint(), Request: req, Headers: hdr, Source: c.source(i), Time: snapshottest.BaseTime,
			Response: snapshot.Response{Fields: f, LatencyMS: 12, Stream: c.stream(), Body: body},
		})
	}
	items = append(items, more...)
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	return rec
}

// loadSet runs the static checks and fails the test on any finding.
func loadSet(t testing.TB, dir string, cfg *check.Config) (*result.VerifyReport, *check.SetResult) {
	t.Helper()
	return load(t, StaticOptions{Dir: dir, Display: ".ai-snapshots", Config: cfg})
}

// loadServed is loadSet keeping only what replay needs (StaticOptions.Serve),
// as verify --serve and verify -- COMMAND load the set; the replay server
// is given the entries (ReplayOptions.Entries).
func loadServed(t testing.TB, dir string, cfg *check.Config) (*result.VerifyReport, *check.SetResult, *replay.Entries) {
	t.Helper()
	entries := replay.NewEntries(dir)
	rep, set := load(t, StaticOptions{Dir: dir, Display: ".ai-snapshots", Config: cfg, Serve: entries})
	return rep, set, entries
}

func load(t testing.TB, o StaticOptions) (*result.VerifyReport, *check.SetResult) {
	t.Helper()
	rep, set, err := Static(o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		var b bytes.Buffer
		_ = render.Verify(&b, rep, "text", false)
		t.Fatalf("static checks failed:\n%s", b.String())
	}
	return rep, set
}

func startUpstream(t testing.TB, o fakeupstream.Options) *fakeupstream.Server {
	t.Helper()
	up, err := fakeupstream.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	return up
}

var portRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// goldenFile compares got with testdata/<name> (golden.Assert), loopback
// ports normalized.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), portRE.ReplaceAllString(got, "127.0.0.1:PORT"))
}
