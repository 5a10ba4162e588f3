package record_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
)

func responsesReq(input any) map[string]any {
	return map[string]any{"model": "gpt-4.1-mini", "input": input, "temperature": 0, "max_output_tokens": 64}
}

func responsesTools(req map[string]any) map[string]any {
	req["tools"] = []any{map[string]any{"type": "function", "name": "get_weather", "description": "Weather for a city", "strict": true,
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}, "additionalProperties": false}}}
	return req
}

func jsonObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// responsesConversation runs the calls of a Responses application against
// p: a plain call, the same streamed, a function-tool round trip, and a
// previous_response_id chain. It returns the ids the application saw.
func responsesConversation(t *testing.T, p *proxy) (ids []string) {
	t.Helper()
	r := p.do("/v1/responses", responsesReq("Summarize: traceforge records LLM calls"), nil)
	if r.status != 200 {
		t.Fatalf("plain: %d %s", r.status, r.body)
	}
	first := jsonObject(t, r.body)
	ids = append(ids, first["id"].(string))

	s := p.do("/v1/responses", streamed(responsesReq("Stream: traceforge records LLM calls")), nil)
	if s.status != 200 || !strings.Contains(string(s.body), "event: response.completed") {
		t.Fatalf("stream: %d %s", s.status, s.body)
	}

	tool := p.do("/v1/responses", responsesTools(responsesReq([]any{map[string]any{"role": "user", "content": "What is the weather in Paris?"}})), nil)
	call := jsonObject(t, tool.body)["output"].([]any)[0].(map[string]any)
	if call["type"] != "function_call" {
		t.Fatalf("want a function call: %s", tool.body)
	}
	round := responsesTools(responsesReq([]any{
		map[string]any{"role": "user", "content": "What is the weather in Paris?"},
		call,
		map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": `{"temp":21}`},
	}))
	if r := p.do("/v1/responses", round, nil); r.status != 200 || !strings.Contains(string(r.body), "The tool returned") {
		t.Fatalf("tool result: %d %s", r.status, r.body)
	}

	chained := responsesReq("And in one word?")
	chained["previous_response_id"] = first["id"]
	c := p.do("/v1/responses", chained, nil)
	if c.status != 200 {
		t.Fatalf("chained: %d %s", c.status, c.body)
	}
	return append(ids, jsonObject(t, c.body)["id"].(string))
}

// TestResponsesRecordAndRerecord: every Responses call becomes a snapshot
// with endpoint /v1/responses; the chained call's key names its parent
// snapshot (lineage turn 2) while its request keeps the provider's id; the
// tool round trip continues the tool call (input-run lineage). Re-recorded
// against an upstream that mints new ids, every file is kept byte for byte
// (call ids, item ids and the chain are keyed by position, not by id).
func TestResponsesRecordAndRerecord(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{MintIDs: true})
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, fake, nil)
	firstIDs := responsesConversation(t, p)
	if s := p.finish(); s.Failed() {
		t.Fatalf("record failed:\n%s", summaryText(s))
	}
	set := verifySet(t, dir)
	noKeyOnDisk(t, dir)
	before := snapshots(t, dir)
	if len(before) != 5 {
		t.Fatalf("%d snapshots, want 5", len(before))
	}
	byInput := map[string]map[string]any{}
	for _, data := range before {
		rec := readRecord(t, data)
		if rec["endpoint"] != "/v1/responses" {
			t.Errorf("endpoint %v", rec["endpoint"])
		}
		in, _ := json.Marshal(rec["request"].(map[string]any)["input"])
		byInput[string(in)] = rec
	}
	chained := byInput[`"And in one word?"`]
	parent := byInput[`"Summarize: traceforge records LLM calls"`]
	if chained == nil || parent == nil {
		t.Fatalf("records by input: %v", reflect.ValueOf(byInput).MapKeys())
	}
	lin, _ := chained["lineage"].(map[string]any)
	if lin == nil || lin["parent_id"] != parent["id"] || lin["turn"] != json.Number("2") {
		t.Errorf("chained lineage %v, want parent %v turn 2", chained["lineage"], parent["id"])
	}
	if chained["request"].(map[string]any)["previous_response_id"] != firstIDs[0] {
		t.Error("the stored request keeps the provider's previous_response_id")
	}
	streamedRec := withBody(t, "openai", byInput[`"Stream: traceforge records LLM calls"`])
	if resp := streamedRec["response"].(map[string]any); resp["stream"] != true || resp["body"].(map[string]any)["object"] != "response" {
		t.Errorf("streamed record: %v", resp)
	}
	toolTurns := 0
	for _, s := range set.Snapshots {
		if s.Record.Turn == 2 && s.Record.ParentID != parent["id"] {
			toolTurns++ // the tool result continues the tool call
		}
	}
	if toolTurns != 1 {
		t.Errorf("%d tool-result snapshots with input-run lineage, want 1", toolTurns)
	}

	// Re-record: new ids everywhere upstream, the same files.
	p2 := newProxy(t, dir, fake, nil)
	secondIDs := responsesConversation(t, p2)
	if s := p2.finish(); s.Failed() {
		t.Fatalf("re-record failed:\n%s", summaryText(s))
	}
	if secondIDs[0] == firstIDs[0] {
		t.Fatal("the fake upstream should mint new ids")
	}
	after := snapshots(t, dir)
	if !reflect.DeepEqual(keysOf(after), keysOf(before)) {
		t.Fatalf("re-record changed the set: %v → %v", keysOf(before), keysOf(after))
	}
	for rel := range before {
		if string(after[rel]) != string(before[rel]) {
			t.Errorf("%s was rewritten", rel)
		}
	}
}

// TestResponsesOnlyMissingServesChain: with the upstream failing, a chained
// conversation replays from the set: the first answer is served with its
// stored id, and the chained request naming that id is a hit.
func TestResponsesOnlyMissingServesChain(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, fake, nil)
	responsesConversation(t, p)
	if s := p.finish(); s.Failed() {
		t.Fatalf("record failed:\n%s", summaryText(s))
	}
	fake.SetOptions(fakeupstream.Options{FailStatus: 500})
	p2 := newProxy(t, dir, fake, func(c *record.Config) { c.OnlyMissing = replay.NewResponder(dir) })
	before := fake.Requests()
	responsesConversation(t, p2)
	if s := p2.finish(); s.Failed() {
		t.Fatalf("only-missing failed:\n%s", summaryText(s))
	}
	if fake.Requests() != before {
		t.Errorf("%d calls reached the upstream; every call is a hit", fake.Requests()-before)
	}
}

// TestResponsesUnknownParent: a previous_response_id no answer of the run
// or the set carries is keyed verbatim, gets no lineage, and is logged.
func TestResponsesUnknownParent(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, fake, nil)
	req := responsesReq("Continue")
	req["previous_response_id"] = "resp_from_elsewhere"
	if r := p.do("/v1/responses", req, nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("record failed:\n%s", summaryText(s))
	}
	for _, data := range snapshots(t, dir) {
		if rec := readRecord(t, data); rec["lineage"] != nil {
			t.Errorf("lineage %v for an unknown parent", rec["lineage"])
		}
	}
	if !strings.Contains(p.log.String(), "previous_response_id resp_from_elsewhere") {
		t.Errorf("log:\n%s", p.log.String())
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestResponsesOtherRoutesForwarded: retrieving a stored response (GET
// /v1/responses/{id}) is forwarded to the upstream, answered and kept as
// an exchange record (DESIGN §13.4); a route no provider lists
// (moderations) is still forwarded, not snapshotted, and listed (record
// exits 1).
func TestResponsesOtherRoutesForwarded(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, fake, nil)
	r := p.do("/v1/responses", responsesReq("Store me"), nil)
	id, _ := jsonObject(t, r.body)["id"].(string)
	got := call(t, http.MethodGet, p.srv.URL+"/v1/responses/"+id, nil, nil)
	if got.status != 200 || jsonObject(t, got.body)["id"] != id || fake.LastRequest().Path != "/v1/responses/"+id {
		t.Fatalf("GET forwarded: %d %s (upstream saw %s)", got.status, got.body, fake.LastRequest().Path)
	}
	if s := p.finish(); s.Failed() || s.Exchanges != 1 || len(snapshots(t, dir)) != 2 {
		t.Fatalf("want the create call and the GET snapshotted:\n%s", summaryText(s))
	}

	p = newProxy(t, dir, fake, nil)
	mod := p.do("/v1/moderations", map[string]any{"input": "hello"}, nil)
	if fake.LastRequest().Path != "/v1/moderations" {
		t.Fatalf("moderations not forwarded: %d %s", mod.status, mod.body)
	}
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindUnknownPath) || len(snapshots(t, dir)) != 2 {
		t.Fatalf("want moderations listed, not snapshotted:\n%s", summaryText(s))
	}
}
