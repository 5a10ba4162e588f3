package responses_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/formattest"
	"github.com/traceforge/traceforge/internal/provider/openai/responses"
)

// The testdata answers were written by the fake upstream
// (internal/fakeupstream), which follows the API's event shapes and order:
// NAME.request.json, NAME.json (plain) and NAME.sse (the same request
// streamed).
var fixtures = []string{"text", "tool", "reasoning", "incomplete"}

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := provider.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func assemble(t testing.TB, stream []byte, chunk int) (map[string]any, error) {
	t.Helper()
	return formattest.Assemble(responses.New(), stream, chunk)
}

func canonical(t testing.TB, v any) string { return formattest.Canon(t, v) }

// TestStreamAndPlainGiveTheSameFields: a streamed call and the same call
// made plain give equal fields (the one equality), whatever the chunking;
// the stored body of a stream is the final event's response.
func TestStreamAndPlainGiveTheSameFields(t *testing.T) {
	f := responses.New()
	want := map[string]struct {
		content, finish string
		tools           int
	}{
		"text":       {"Echo: Summarize: AI is transforming software development", "completed", 0},
		"tool":       {"", "completed", 1},
		"reasoning":  {"Echo: Why is the sky blue?", "completed", 0},
		"incomplete": {"Echo: Write a", "max_output_tokens", 0},
	}
	for _, name := range fixtures {
		plain := decode(t, string(read(t, name+".json")))
		pf, err := f.Fields(plain)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := want[name]
		if pf.Content != w.content || pf.FinishReason != w.finish || len(pf.ToolCalls) != w.tools || pf.TokensUsed <= 0 || pf.Model == "" || pf.Usage == nil {
			t.Errorf("%s: fields %+v", name, pf)
		}
		for _, chunk := range []int{1, 7, 1 << 20} {
			body, err := assemble(t, read(t, name+".sse"), chunk)
			if err != nil {
				t.Fatalf("%s/%d: %v", name, chunk, err)
			}
			sf, err := f.Fields(body)
			if err != nil {
				t.Fatal(err)
			}
			if d := provider.Diff(pf, sf); len(d) > 0 {
				t.Errorf("%s/%d: stream and plain differ: %v", name, chunk, d)
			}
		}
	}
	tool, _ := f.Fields(decode(t, string(read(t, "tool.json"))))
	if call := tool.ToolCalls[0].(map[string]any); call["type"] != "function_call" || call["name"] != "get_weather" || call["call_id"] == nil {
		t.Errorf("tool call kept verbatim: %v", call)
	}
}

// eventsOf splits a stream into (event name, data type, sequence_number).
func eventsOf(t *testing.T, stream []byte) (names []string, seqs []int64) {
	t.Helper()
	var p provider.SSEParser
	err := p.Feed(stream, func(ev provider.SSEEvent) error {
		m, err := provider.Decode(ev.Data)
		if err != nil {
			return err
		}
		if m["type"] != ev.Name {
			t.Errorf("event %q carries type %v", ev.Name, m["type"])
		}
		n, _ := provider.AsInt(m["sequence_number"])
		names = append(names, ev.Name)
		seqs = append(seqs, n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, seqs
}

// TestSynthesizedStream: replay's stream has exactly the event order of
// DESIGN §12.9 item 12, sequence numbers from 0, and assembles back to the
// stored body byte for byte; the events are the ones the API sends.
func TestSynthesizedStream(t *testing.T) {
	f := responses.New()
	wantOrder := map[string][]string{
		"text": {"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"},
		"tool": {"response.created", "response.in_progress", "response.output_item.added", "response.function_call_arguments.delta",
			"response.function_call_arguments.done", "response.output_item.done", "response.completed"},
		"reasoning": {"response.created", "response.in_progress",
			"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
			"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
			"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done",
			"response.content_part.done", "response.output_item.done", "response.completed"},
		"incomplete": {"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"},
	}
	for _, name := range fixtures {
		body := decode(t, string(read(t, name+".json")))
		var out bytes.Buffer
		flushes := 0
		if err := f.SynthesizeStream(body, false, &out, func() { flushes++ }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		names, seqs := eventsOf(t, out.Bytes())
		if !reflect.DeepEqual(names, wantOrder[name]) {
			t.Errorf("%s: events\n%v\nwant\n%v", name, names, wantOrder[name])
		}
		for i, s := range seqs {
			if s != int64(i) {
				t.Errorf("%s: event %d has sequence_number %d", name, i, s)
			}
		}
		if flushes != len(names) {
			t.Errorf("%s: %d flushes for %d events", name, flushes, len(names))
		}
		// Every synthesized event type is one the API (the fake upstream) sends.
		real, _ := eventsOf(t, read(t, name+".sse"))
		seen := map[string]bool{}
		for _, n := range real {
			seen[n] = true
		}
		for _, n := range names {
			if !seen[n] {
				t.Errorf("%s: synthesized event %s is not in the real stream", name, n)
			}
		}
		back, err := assemble(t, out.Bytes(), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if canonical(t, back) != canonical(t, body) {
			t.Errorf("%s: the replayed stream does not assemble to the stored body", name)
		}
		var again bytes.Buffer
		_ = f.SynthesizeStream(body, false, &again, nil)
		if !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Errorf("%s: synthesis is not deterministic", name)
		}
	}
}

func TestSynthesizeRefusesWhatCannotStream(t *testing.T) {
	f := responses.New()
	for name, body := range map[string]string{
		"queued":    `{"id":"r","status":"queued","output":[]}`,
		"no output": `{"id":"r","status":"completed"}`,
		"bad item":  `{"id":"r","status":"completed","output":[1]}`,
	} {
		var out bytes.Buffer
		err := f.SynthesizeStream(decode(t, body), false, &out, nil)
		if !errors.Is(err, provider.ErrMalformed) {
			t.Errorf("%s: err = %v", name, err)
		}
		if name != "bad item" && out.Len() != 0 {
			t.Errorf("%s: wrote %q before refusing", name, out.String())
		}
	}
}

func TestBrokenStreams(t *testing.T) {
	text := string(read(t, "text.sse"))
	cut := text[:strings.Index(text, "event: response.completed")]
	cases := map[string]struct {
		stream string
		want   error
	}{
		"no terminal event":         {cut, provider.ErrBrokenStream},
		"error event":               {cut + "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\",\"sequence_number\":9}\n\n", provider.ErrStreamError},
		"response.failed ok":        {cut + "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\",\"status\":\"failed\"}}\n\n", nil},
		"not json":                  {"event: response.created\ndata: {oops\n\n", provider.ErrMalformed},
		"not an object":             {"event: response.created\ndata: [1]\n\n", provider.ErrMalformed},
		"terminal without response": {cut + "event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n", provider.ErrMalformed},
	}
	for name, c := range cases {
		body, err := assemble(t, []byte(c.stream), 5)
		if c.want == nil {
			if err != nil || body["status"] != "failed" {
				t.Errorf("%s: %v %v", name, body, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	// The event type may come from the data alone (no event: lines).
	body, err := assemble(t, []byte(strings.ReplaceAll(text, "event: ", "x-ignored: ")), 64)
	if err != nil || body["status"] != "completed" {
		t.Errorf("data-typed events: %v", err)
	}
}

func TestFieldsErrors(t *testing.T) {
	f := responses.New()
	plain := string(read(t, "text.json"))
	noUsage := decode(t, plain)
	noUsage["usage"] = nil
	if _, err := f.Fields(noUsage); !errors.Is(err, provider.ErrNoUsage) {
		t.Errorf("no usage: %v", err)
	}
	noStatus := decode(t, plain)
	delete(noStatus, "status")
	if _, err := f.Fields(noStatus); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("no status: %v", err)
	}
	noOutput := decode(t, plain)
	noOutput["output"] = "x"
	if _, err := f.Fields(noOutput); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("bad output: %v", err)
	}
}

// TestKeyRequest: stream fields dropped; call ids and item ids renumbered in
// order of first appearance; previous_response_id replaced by the parent
// snapshot when resolved, kept verbatim otherwise; the input is untouched.
func TestKeyRequest(t *testing.T) {
	in := `{"model":"m","stream":true,"stream_options":{"include_obfuscation":false},"previous_response_id":"resp_9","input":[
	  {"role":"user","content":"hi"},
	  {"type":"reasoning","id":"rs_A","summary":[]},
	  {"type":"function_call","id":"fc_B","call_id":"call_Zq","name":"f","arguments":"{}"},
	  {"type":"function_call","id":"fc_C","call_id":"call_Aa","name":"f","arguments":"{}"},
	  {"type":"function_call_output","id":"out_1","call_id":"call_Aa","output":"1"},
	  {"type":"function_call_output","call_id":"call_Zq","output":"2"},
	  {"type":"message","id":"msg_D","role":"assistant","content":[{"type":"output_text","text":"x"}]},
	  {"type":"item_reference","id":"rs_A"},
	  "odd"]}`
	req := decode(t, in)
	before := canonical(t, req)
	f := responses.New()
	kc := &provider.KeyContext{Parent: func(id string) (string, int, bool) {
		return "0123456789ab", 1, id == "resp_9"
	}}
	got := canonical(t, f.KeyRequest(req, kc))
	want := `{"input":[{"content":"hi","role":"user"},{"id":"item_1","summary":[],"type":"reasoning"},` +
		`{"arguments":"{}","call_id":"call_1","id":"item_2","name":"f","type":"function_call"},` +
		`{"arguments":"{}","call_id":"call_2","id":"item_3","name":"f","type":"function_call"},` +
		`{"call_id":"call_2","id":"out_1","output":"1","type":"function_call_output"},` +
		`{"call_id":"call_1","output":"2","type":"function_call_output"},` +
		`{"content":[{"text":"x","type":"output_text"}],"id":"item_4","role":"assistant","type":"message"},` +
		`{"id":"item_1","type":"item_reference"},"odd"],"model":"m","previous_response_id":"snapshot:0123456789ab"}`
	if got != want {
		t.Errorf("KeyRequest =\n%s\nwant\n%s", got, want)
	}
	if canonical(t, req) != before {
		t.Error("KeyRequest modified its input")
	}
	if k := f.KeyRequest(req, nil); k["previous_response_id"] != "resp_9" {
		t.Errorf("an unresolved previous_response_id is kept verbatim, got %v", k["previous_response_id"])
	}
}

func TestLineage(t *testing.T) {
	f := responses.New()
	parentOf := func(cut map[string]any) (string, error) {
		items, _ := cut["input"].([]any)
		return strings.Repeat("a", 11) + string(rune('0'+len(items))), nil
	}
	kc := &provider.KeyContext{Parent: func(id string) (string, int, bool) { return "feedfeedfeed", 3, id == "resp_1" }}
	if p, turn, ok, _ := f.Lineage(decode(t, `{"previous_response_id":"resp_1","input":"next"}`), kc, parentOf); !ok || p != "feedfeedfeed" || turn != 4 {
		t.Errorf("chained: %s %d %v", p, turn, ok)
	}
	if _, _, ok, _ := f.Lineage(decode(t, `{"previous_response_id":"resp_x","input":[{"role":"assistant","content":"a"}]}`), kc, parentOf); ok {
		t.Error("an unresolved chain has no lineage")
	}
	if _, _, ok, _ := f.Lineage(decode(t, `{"input":"hi"}`), nil, parentOf); ok {
		t.Error("a first turn has no lineage")
	}
	// Two assistant runs (a message; reasoning + function call): the parent
	// is cut before the second run, turn 3.
	req := decode(t, `{"input":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"},
	  {"type":"reasoning","id":"rs"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},
	  {"type":"function_call_output","call_id":"c","output":"o"}]}`)
	p, turn, ok, err := f.Lineage(req, nil, parentOf)
	if err != nil || !ok || turn != 3 || p != "aaaaaaaaaaa3" {
		t.Errorf("input runs: %s %d %v %v", p, turn, ok, err)
	}
}

func TestRouteAndStoredNormalization(t *testing.T) {
	f := responses.New()
	for path, want := range map[string]bool{"/v1/responses": true, "/openai/v1/responses": true, "/v1/responses/resp_1": false, "/v1/responses/resp_1/cancel": false} {
		if _, ok := f.Route("POST", path); ok != want {
			t.Errorf("Route(POST %s) = %v", path, ok)
		}
	}
	if _, ok := f.Route("GET", "/v1/responses"); ok {
		t.Error("GET is not the create route")
	}
	req := decode(t, `{"model":"m","input":"x","previous_response_id":null,"temperature":0,"text":{"format":null}}`)
	f.NormalizeStored(req)
	if _, ok := req["previous_response_id"]; ok || req["text"] == nil {
		t.Errorf("top-level nulls dropped, nested kept: %v", req)
	}
	if temp, seed := f.Determinism(); temp != "/temperature" || seed != "" {
		t.Errorf("Determinism = %q %q: temperature 0, no seed", temp, seed)
	}
	if f.OwnsRecord(map[string]any{"input": "x"}) {
		t.Error("no format 1.0.0 record is a Responses record")
	}
}

// TestHeld: the assembler reports the size of the final response only, not
// the stream's bytes (the snapshot cap applies to what is stored).
func TestHeld(t *testing.T) {
	stream := read(t, "text.sse")
	a := responses.New().NewAssembler()
	sized, ok := a.(provider.SizedAssembler)
	if !ok {
		t.Fatal("the Responses assembler must tell its size")
	}
	cut := bytes.Index(stream, []byte("event: response.completed"))
	_, _ = a.Write(stream[:cut])
	if sized.Held() != 0 {
		t.Errorf("before the terminal event: held %d", sized.Held())
	}
	_, _ = a.Write(stream[cut:])
	if h := sized.Held(); h <= 0 || h >= int64(len(stream)) {
		t.Errorf("held %d for a %d-byte stream", h, len(stream))
	}
}
