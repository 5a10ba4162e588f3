package fakeupstream

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// start runs a server for one test.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// rawClient never adds Accept-Encoding nor decompresses.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

type hdr map[string]string

var openAIAuth = hdr{"Authorization": "Bearer sk-test"}
var anthropicAuth = hdr{"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}

func do(t *testing.T, url, body string, h hdr) (*http.Response, []byte) {
	t.Helper()
	resp, err := doErr(url, body, h)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, b
}

func doErr(url, body string, h hdr) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return rawClient.Do(req)
}

// obj decodes a JSON object, failing the test otherwise.
func obj(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// get walks a decoded JSON value by keys and indexes.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: not an object: %v", k, v)
			}
			if _, ok := m[k]; !ok {
				t.Fatalf("missing key %q in %v", k, m)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at [%d]: not an array of that length: %v", k, v)
			}
			v = a[k]
		}
	}
	return v
}

func has(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[key]
	return ok
}

type sseEvent struct {
	name string
	data string
}

// parseSSE checks the framing (every event ends with a blank line, only
// "event:" and "data:" lines) and returns the events.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("stream does not end with a blank line: %q", tail(body))
	}
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var ev sseEvent
		sc := bufio.NewScanner(strings.NewReader(block))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		lines := 0
		for sc.Scan() {
			line := sc.Text()
			lines++
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if ev.data != "" {
					t.Fatalf("two data lines in one event: %q", block)
				}
				ev.data = strings.TrimPrefix(line, "data: ")
			default:
				t.Fatalf("unexpected SSE line %q in %q", line, block)
			}
		}
		if lines == 0 || ev.data == "" {
			t.Fatalf("event without data: %q", block)
		}
		out = append(out, ev)
	}
	return out
}

func tail(b []byte) []byte {
	if len(b) > 80 {
		return b[len(b)-80:]
	}
	return b
}

// chatStream is an assembled OpenAI chat stream.
type chatStream struct {
	ids        map[string]bool
	role       string
	content    string
	finish     string
	toolIDs    map[int]string
	toolNames  map[int]string
	toolArgs   map[int]string
	usage      map[string]any
	done       bool
	chunks     int
	usageNulls int
}

func assembleChat(t *testing.T, body []byte) chatStream {
	t.Helper()
	cs := chatStream{ids: map[string]bool{}, toolIDs: map[int]string{}, toolNames: map[int]string{}, toolArgs: map[int]string{}}
	evs := parseSSE(t, body)
	for i, ev := range evs {
		if ev.name != "" {
			t.Fatalf("OpenAI event with a name: %q", ev.name)
		}
		if ev.data == "[DONE]" {
			if i != len(evs)-1 {
				t.Fatal("[DONE] is not last")
			}
			cs.done = true
			continue
		}
		cs.chunks++
		m := obj(t, []byte(ev.data))
		if get(t, m, "object") != "chat.completion.chunk" {
			t.Fatalf("object = %v", m["object"])
		}
		if s, _ := m["obfuscation"].(string); s == "" {
			t.Fatalf("chunk without obfuscation: %s", ev.data)
		}
		cs.ids[get(t, m, "id").(string)] = true
		if u, ok := m["usage"]; ok {
			if u == nil {
				cs.usageNulls++
			} else {
				if n := len(get(t, m, "choices").([]any)); n != 0 {
					t.Fatalf("usage chunk has %d choices", n)
				}
				cs.usage = u.(map[string]any)
			}
		}
		for _, ch := range get(t, m, "choices").([]any) {
			if get(t, ch, "index").(float64) != 0 {
				t.Fatal("choice index != 0")
			}
			d := get(t, ch, "delta").(map[string]any)
			if r, ok := d["role"].(string); ok {
				cs.role = r
			}
			if c, ok := d["content"].(string); ok {
				cs.content += c
			}
			if f, ok := get(t, ch, "finish_reason").(string); ok {
				cs.finish = f
			}
			tcs, _ := d["tool_calls"].([]any)
			for _, tc := range tcs {
				idx := int(get(t, tc, "index").(float64))
				if id, ok := tc.(map[string]any)["id"].(string); ok {
					cs.toolIDs[idx] = id
				}
				fn := get(t, tc, "function").(map[string]any)
				if n, ok := fn["name"].(string); ok {
					cs.toolNames[idx] = n
				}
				cs.toolArgs[idx] += fn["arguments"].(string)
			}
		}
	}
	return cs
}

// messageStream is an assembled Anthropic stream.
type messageStream struct {
	names      []string
	message    map[string]any
	text       string
	toolInputs []string
	toolNames  []string
	toolIDs    []string
	stop       string
	outTokens  float64
}

func assembleMessages(t *testing.T, body []byte) messageStream {
	t.Helper()
	var ms messageStream
	inputs := map[int]string{}
	for _, ev := range parseSSE(t, body) {
		if ev.name == "" {
			t.Fatalf("Anthropic event without an event: line: %q", ev.data)
		}
		ms.names = append(ms.names, ev.name)
		m := obj(t, []byte(ev.data))
		if get(t, m, "type") != ev.name {
			t.Fatalf("event %q carries type %v", ev.name, m["type"])
		}
		switch ev.name {
		case "message_start":
			ms.message = get(t, m, "message").(map[string]any)
		case "content_block_start":
			cb := get(t, m, "content_block").(map[string]any)
			if cb["type"] == "tool_use" {
				ms.toolNames = append(ms.toolNames, cb["name"].(string))
				ms.toolIDs = append(ms.toolIDs, cb["id"].(string))
			}
		case "content_block_delta":
			idx := int(get(t, m, "index").(float64))
			d := get(t, m, "delta").(map[string]any)
			switch d["type"] {
			case "text_delta":
				ms.text += d["text"].(string)
			case "input_json_delta":
				inputs[idx] += d["partial_json"].(string)
			default:
				t.Fatalf("delta type %v", d["type"])
			}
		case "content_block_stop":
			idx := int(get(t, m, "index").(float64))
			if s, ok := inputs[idx]; ok {
				if !json.Valid([]byte(s)) {
					t.Fatalf("tool input %q is not JSON", s)
				}
				ms.toolInputs = append(ms.toolInputs, s)
			}
		case "message_delta":
			ms.stop = get(t, m, "delta", "stop_reason").(string)
			ms.outTokens = get(t, m, "usage", "output_tokens").(float64)
		}
	}
	return ms
}

var geminiAuth = hdr{"x-goog-api-key": "AIza-test"}

// doMethod sends a body-less request with the given method.
func doMethod(t *testing.T, method, url string, h hdr) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// parseCRLFSSE checks Google's framing (every line ends with "\r\n", every
// event with a blank "\r\n" line) and returns the events.
func parseCRLFSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\r\n\r\n")) {
		t.Fatalf("stream does not end with a CRLF blank line: %q", tail(body))
	}
	if bytes.Count(body, []byte("\n")) != bytes.Count(body, []byte("\r\n")) {
		t.Fatalf("a line does not end with CRLF: %q", body)
	}
	return parseSSE(t, bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")))
}

// parseNDJSON checks that every line is a JSON object and returns them.
func parseNDJSON(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n")) {
		t.Fatalf("NDJSON does not end with a newline: %q", tail(body))
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		out = append(out, obj(t, []byte(line)))
	}
	return out
}

// jsonEqual compares two JSON values after decoding.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

// gunzip decompresses a gzip body.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
