package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

const respTools = `"tools":[{"type":"function","name":"get_weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}]`

var hexID = regexp.MustCompile(`^(resp|msg|fc|rs)_[0-9a-f]{48}$`)

// responsesStream is an assembled Responses stream.
type responsesStream struct {
	names    []string
	text     string
	args     map[string]string // by item_id
	summary  string
	final    map[string]any
	items    []any // output_item.done items in order
	terminal string
}

func assembleResponses(t *testing.T, body []byte) responsesStream {
	t.Helper()
	rs := responsesStream{args: map[string]string{}}
	evs := parseSSE(t, body)
	for i, ev := range evs {
		m := obj(t, []byte(ev.data))
		if ev.name == "" || get(t, m, "type") != ev.name {
			t.Fatalf("event %q carries type %v", ev.name, m["type"])
		}
		if got := get(t, m, "sequence_number").(float64); int(got) != i {
			t.Fatalf("event %d has sequence_number %v", i, got)
		}
		rs.names = append(rs.names, strings.TrimPrefix(ev.name, "response."))
		switch ev.name {
		case "response.output_text.delta":
			rs.text += get(t, m, "delta").(string)
			if get(t, m, "item_id") == "" {
				t.Fatal("delta without item_id")
			}
		case "response.output_text.done":
			if get(t, m, "text") != rs.text {
				t.Fatalf("output_text.done %v, deltas %q", m["text"], rs.text)
			}
		case "response.function_call_arguments.delta":
			rs.args[get(t, m, "item_id").(string)] += get(t, m, "delta").(string)
		case "response.function_call_arguments.done":
			id := get(t, m, "item_id").(string)
			if get(t, m, "arguments") != rs.args[id] {
				t.Fatalf("arguments.done %v, deltas %q", m["arguments"], rs.args[id])
			}
		case "response.reasoning_summary_text.delta":
			rs.summary += get(t, m, "delta").(string)
		case "response.output_item.done":
			rs.items = append(rs.items, get(t, m, "item"))
		case "response.completed", "response.incomplete", "response.failed":
			if i != len(evs)-1 {
				t.Fatalf("%s is not last", ev.name)
			}
			rs.final = get(t, m, "response").(map[string]any)
			rs.terminal = ev.name
		}
	}
	if rs.final == nil {
		t.Fatal("no terminal event")
	}
	return rs
}

// withoutIDs returns v with every "id" and "call_id" value blanked.
func withoutIDs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			if k == "id" || k == "call_id" {
				x = "ID"
			}
			out[k] = withoutIDs(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = withoutIDs(x)
		}
		return out
	}
	return v
}

func streamed(body string) string { return strings.Replace(body, `{`, `{"stream":true,`, 1) }

func TestResponsesPlain(t *testing.T) {
	s := start(t, Options{})
	const req = `{"model":"gpt-4.1-mini","instructions":"Be brief.","input":"Hello big world","temperature":0}`
	resp, b := do(t, s.URL+"/v1/responses", req, openAIAuth)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(string(b), "{\n  \"id\": \"resp_") || !strings.Contains(string(b), `"content": [
        {
          "type": "output_text",`) {
		t.Fatalf("not in the API's member order:\n%s", b)
	}
	m := obj(t, b)
	for k, want := range map[string]any{"object": "response", "status": "completed", "model": "gpt-4.1-mini",
		"incomplete_details": nil, "previous_response_id": nil, "temperature": 0.0, "instructions": "Be brief.", "error": nil} {
		if got := get(t, m, k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if id := get(t, m, "id").(string); !hexID.MatchString(id) || !strings.HasPrefix(id, "resp_") {
		t.Errorf("id %q", id)
	}
	if out := get(t, m, "output").([]any); len(out) != 1 {
		t.Fatalf("output %v", out)
	}
	item := get(t, m, "output", 0)
	if get(t, item, "type") != "message" || get(t, item, "role") != "assistant" || get(t, item, "status") != "completed" ||
		!strings.HasPrefix(get(t, item, "id").(string), "msg_") {
		t.Errorf("item %v", item)
	}
	part := get(t, item, "content", 0)
	if get(t, part, "type") != "output_text" || get(t, part, "text") != "Echo: Hello big world" {
		t.Errorf("part %v", part)
	}
	u := get(t, m, "usage")
	if get(t, u, "input_tokens") != 5.0 || get(t, u, "output_tokens") != 4.0 || get(t, u, "total_tokens") != 9.0 ||
		get(t, u, "output_tokens_details", "reasoning_tokens") != 0.0 {
		t.Errorf("usage %v", u)
	}
}

func TestResponsesDeterministicIDs(t *testing.T) {
	s := start(t, Options{})
	const req = `{"model":"m","input":"Same request"}`
	_, b1 := do(t, s.URL+"/v1/responses", req, openAIAuth)
	_, b2 := do(t, s.URL+"/v1/responses", req, openAIAuth)
	if string(b1) != string(b2) {
		t.Fatalf("same request, different answers:\n%s\n%s", b1, b2)
	}
	_, b3 := do(t, s.URL+"/v1/responses", `{"model":"m","input":"Other request"}`, openAIAuth)
	if get(t, obj(t, b1), "id") == get(t, obj(t, b3), "id") {
		t.Fatal("different requests, same id")
	}
	s.SetOptions(Options{MintIDs: true})
	_, m1 := do(t, s.URL+"/v1/responses", req, openAIAuth)
	_, m2 := do(t, s.URL+"/v1/responses", req, openAIAuth)
	o1, o2 := obj(t, m1), obj(t, m2)
	if o1["id"] == o2["id"] || get(t, o1, "output", 0, "id") == get(t, o2, "output", 0, "id") {
		t.Fatalf("MintIDs: ids repeat: %v %v", o1["id"], o2["id"])
	}
	if get(t, o1, "output", 0, "content", 0, "text") != get(t, o2, "output", 0, "content", 0, "text") {
		t.Fatal("MintIDs changed the content")
	}
}

func TestResponsesStreamMatchesPlain(t *testing.T) {
	s := start(t, Options{})
	const req = `{"model":"gpt-4o","input":[{"role":"user","content":[{"type":"input_text","text":"Tell me a story please"}]}]}`
	_, plain := do(t, s.URL+"/v1/responses", req, openAIAuth)
	resp, b := do(t, s.URL+"/v1/responses", streamed(req), openAIAuth)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content-type %q", resp.Header.Get("Content-Type"))
	}
	rs := assembleResponses(t, b)
	// Members in the API's order: type and sequence_number first.
	for i, ev := range parseSSE(t, b) {
		if prefix := fmt.Sprintf(`{"type":%q,"sequence_number":%d,`, ev.name, i); !strings.HasPrefix(ev.data, prefix) {
			t.Fatalf("event %d does not start with %s: %s", i, prefix, ev.data)
		}
	}
	want := []string{"created", "in_progress", "output_item.added", "content_part.added"}
	for range textPieces("Echo: Tell me a story please") {
		want = append(want, "output_text.delta")
	}
	want = append(want, "output_text.done", "content_part.done", "output_item.done", "completed")
	if strings.Join(rs.names, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n%v\nwant\n%v", rs.names, want)
	}
	p := obj(t, plain)
	if rs.text != get(t, p, "output", 0, "content", 0, "text") {
		t.Fatalf("streamed %q", rs.text)
	}
	// The completed response is the plain answer but for the ids (the
	// requests differ by "stream").
	if !jsonEqual(t, withoutIDs(p), withoutIDs(rs.final)) {
		t.Fatalf("completed response differs from the plain one:\n%v\n%v", rs.final, p)
	}
	if !jsonEqual(t, rs.items, rs.final["output"]) {
		t.Fatal("output_item.done items differ from the output")
	}
}

func TestResponsesFunctionCall(t *testing.T) {
	s := start(t, Options{})
	req := `{"model":"gpt-4o","input":"What is the weather in Paris?",` + respTools + `}`
	_, b := do(t, s.URL+"/v1/responses", req, openAIAuth)
	m := obj(t, b)
	item := get(t, m, "output", 0)
	if get(t, item, "type") != "function_call" || get(t, item, "name") != "get_weather" ||
		get(t, item, "arguments") != `{"city":"Paris"}` || get(t, item, "status") != "completed" ||
		!strings.HasPrefix(get(t, item, "id").(string), "fc_") || !strings.HasPrefix(get(t, item, "call_id").(string), "call_") {
		t.Fatalf("item %v", item)
	}
	if get(t, m, "tools", 0, "strict") != true {
		t.Fatal("tools not echoed verbatim")
	}
	_, sb := do(t, s.URL+"/v1/responses", streamed(req), openAIAuth)
	rs := assembleResponses(t, sb)
	if len(rs.args) != 1 || rs.args[get(t, rs.items[0], "id").(string)] != `{"city":"Paris"}` {
		t.Fatalf("streamed arguments %v", rs.args)
	}
	joined := strings.Join(rs.names, " ")
	if !strings.Contains(joined, "output_item.added function_call_arguments.delta") ||
		!strings.HasSuffix(joined, "function_call_arguments.done output_item.done completed") {
		t.Fatalf("events %v", rs.names)
	}
	// tool_choice "none" answers text.
	_, b = do(t, s.URL+"/v1/responses", strings.Replace(req, `"tools"`, `"tool_choice":"none","tools"`, 1), openAIAuth)
	if get(t, obj(t, b), "output", 0, "type") != "message" {
		t.Fatalf("tool_choice none: %s", b)
	}

	// The round trip: function_call_output items answer text.
	callID := get(t, item, "call_id").(string)
	follow := `{"model":"gpt-4o",` + respTools + `,"input":[{"role":"user","content":"What is the weather in Paris?"},` +
		`{"type":"function_call","call_id":"` + callID + `","name":"get_weather","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"` + callID + `","output":"18C and sunny"}]}`
	_, b = do(t, s.URL+"/v1/responses", follow, openAIAuth)
	if got := get(t, obj(t, b), "output", 0, "content", 0, "text"); got != "The tool returned: 18C and sunny" {
		t.Fatalf("after the tool: %v", got)
	}
}

func TestResponsesReasoning(t *testing.T) {
	s := start(t, Options{})
	req := `{"model":"o4-mini","input":"Think hard","reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"]}`
	_, b := do(t, s.URL+"/v1/responses", req, openAIAuth)
	m := obj(t, b)
	r := get(t, m, "output", 0)
	if get(t, r, "type") != "reasoning" || !strings.HasPrefix(get(t, r, "id").(string), "rs_") ||
		get(t, r, "summary", 0, "text") != "Thinking about: Think hard" || get(t, r, "encrypted_content") == "" {
		t.Fatalf("reasoning item %v", r)
	}
	if get(t, m, "output", 1, "type") != "message" || get(t, m, "reasoning", "effort") != "low" {
		t.Fatalf("%s", b)
	}
	if rt := get(t, m, "usage", "output_tokens_details", "reasoning_tokens").(float64); rt <= 0 ||
		get(t, m, "usage", "output_tokens").(float64) != rt+3 {
		t.Fatalf("usage %v", m["usage"])
	}
	_, sb := do(t, s.URL+"/v1/responses", streamed(req), openAIAuth)
	rs := assembleResponses(t, sb)
	if rs.summary != "Thinking about: Think hard" || rs.names[2] != "output_item.added" || rs.names[3] != "reasoning_summary_part.added" {
		t.Fatalf("stream %v summary %q", rs.names, rs.summary)
	}
	// A plain model with no reasoning parameter has no reasoning item.
	_, b = do(t, s.URL+"/v1/responses", `{"model":"gpt-4o","input":"x"}`, openAIAuth)
	if get(t, obj(t, b), "output", 0, "type") != "message" {
		t.Fatalf("%s", b)
	}
}

func TestResponsesIncomplete(t *testing.T) {
	s := start(t, Options{})
	req := `{"model":"m","input":"one two three four five","max_output_tokens":3}`
	_, b := do(t, s.URL+"/v1/responses", req, openAIAuth)
	m := obj(t, b)
	if get(t, m, "status") != "incomplete" || get(t, m, "incomplete_details", "reason") != "max_output_tokens" ||
		get(t, m, "output", 0, "content", 0, "text") != "Echo: one two" || get(t, m, "output", 0, "status") != "incomplete" {
		t.Fatalf("%s", b)
	}
	_, sb := do(t, s.URL+"/v1/responses", streamed(req), openAIAuth)
	if rs := assembleResponses(t, sb); rs.terminal != "response.incomplete" || rs.final["status"] != "incomplete" {
		t.Fatalf("terminal %s", rs.terminal)
	}
}

func TestResponsesChainRetrieveDelete(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/responses", `{"model":"m","input":"My name is Ada"}`, openAIAuth)
	first := obj(t, b)
	id := first["id"].(string)
	_, b = do(t, s.URL+"/v1/responses", `{"model":"m","input":"What is my name?","previous_response_id":"`+id+`"}`, openAIAuth)
	second := obj(t, b)
	if get(t, second, "previous_response_id") != id {
		t.Fatalf("%s", b)
	}
	// The parent's 9 tokens (4 in, 5 out) count as input.
	if got := get(t, second, "usage", "input_tokens"); got != 4.0+9.0 {
		t.Fatalf("chained input_tokens %v", got)
	}
	// An unknown parent is answered anyway, without its tokens.
	_, b = do(t, s.URL+"/v1/responses", `{"model":"m","input":"What is my name?","previous_response_id":"resp_gone"}`, openAIAuth)
	if got := get(t, obj(t, b), "usage", "input_tokens"); got != 4.0 {
		t.Fatalf("unknown parent: input_tokens %v", got)
	}

	resp, gb := doMethod(t, http.MethodGet, s.URL+"/v1/responses/"+id, openAIAuth)
	if resp.StatusCode != 200 || !jsonEqual(t, obj(t, gb), first) {
		t.Fatalf("GET %d %s", resp.StatusCode, gb)
	}
	if resp, _ := doMethod(t, http.MethodGet, s.URL+"/v1/responses/"+id, nil); resp.StatusCode != 401 {
		t.Fatalf("GET without key: %d", resp.StatusCode)
	}
	resp, db := doMethod(t, http.MethodDelete, s.URL+"/v1/responses/"+id, openAIAuth)
	if resp.StatusCode != 200 || get(t, obj(t, db), "deleted") != true || get(t, obj(t, db), "id") != id {
		t.Fatalf("DELETE %d %s", resp.StatusCode, db)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp, nb := doMethod(t, method, s.URL+"/v1/responses/"+id, openAIAuth)
		if resp.StatusCode != 404 || !strings.Contains(get(t, obj(t, nb), "error", "message").(string), id) {
			t.Fatalf("%s after delete: %d %s", method, resp.StatusCode, nb)
		}
	}
	// store:false answers are not kept.
	_, b = do(t, s.URL+"/v1/responses", `{"model":"m","input":"x","store":false}`, openAIAuth)
	if resp, _ := doMethod(t, http.MethodGet, s.URL+"/v1/responses/"+obj(t, b)["id"].(string), openAIAuth); resp.StatusCode != 404 {
		t.Fatalf("store:false kept: %d", resp.StatusCode)
	}
}

func TestResponsesErrors(t *testing.T) {
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/v1/responses", `{"model":"m","input":"x"}`, nil)
	if resp.StatusCode != 401 || get(t, obj(t, b), "error", "type") != "invalid_request_error" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	resp, b = do(t, s.URL+"/v1/responses", `{"input":"x"}`, openAIAuth)
	if resp.StatusCode != 400 || get(t, obj(t, b), "error", "param") != "model" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	s.SetOptions(Options{FailStatus: 429})
	resp, b = do(t, s.URL+"/v1/responses", streamed(`{"model":"m","input":"x"}`), openAIAuth)
	if resp.StatusCode != 429 || get(t, obj(t, b), "error", "code") != "rate_limit_exceeded" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var e struct{ Error openAIErrorBody }
	if json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
		t.Fatalf("%s", b)
	}
}

// Under MintIDs every call gets new ids, and a chain still finds its parent.
func TestResponsesChainWithMintedIDs(t *testing.T) {
	s := start(t, Options{MintIDs: true})
	_, b := do(t, s.URL+"/v1/responses", `{"model":"m","input":"My name is Ada"}`, openAIAuth)
	parent := obj(t, b)
	_, b = do(t, s.URL+"/v1/responses", `{"model":"m","input":"My name is Ada"}`, openAIAuth)
	if obj(t, b)["id"] == parent["id"] || obj(t, b)["created_at"] == parent["created_at"] {
		t.Fatal("MintIDs: the same request got the same id or created_at")
	}
	_, b = do(t, s.URL+"/v1/responses", `{"model":"m","input":"What is my name?","previous_response_id":"`+parent["id"].(string)+`"}`, openAIAuth)
	if got := get(t, obj(t, b), "usage", "input_tokens"); got != 4.0+get(t, parent, "usage", "total_tokens").(float64) {
		t.Fatalf("chained input_tokens %v", got)
	}
}

// background: queued at once, then GET finds it in progress twice and
// completed from then on; cancel answers "cancelled" for a background
// response and 400 for another.
func TestResponsesBackgroundAndCancel(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/responses", `{"model":"m","input":"Later please","background":true}`, openAIAuth)
	q := obj(t, b)
	if get(t, q, "status") != "queued" || get(t, q, "background") != true || len(get(t, q, "output").([]any)) != 0 {
		t.Fatalf("%s", b)
	}
	id := q["id"].(string)
	for i := 0; i < 2; i++ {
		_, b = doMethod(t, http.MethodGet, s.URL+"/v1/responses/"+id, openAIAuth)
		if m := obj(t, b); get(t, m, "status") != "in_progress" || get(t, m, "id") != id || len(get(t, m, "output").([]any)) != 0 {
			t.Fatalf("poll %d: %s", i+1, b)
		}
	}
	for i := 0; i < 2; i++ {
		_, b = doMethod(t, http.MethodGet, s.URL+"/v1/responses/"+id, openAIAuth)
		if m := obj(t, b); get(t, m, "status") != "completed" || get(t, m, "output", 0, "content", 0, "text") != "Echo: Later please" {
			t.Fatalf("poll %d: %s", i+3, b)
		}
	}
	resp, b := do(t, s.URL+"/v1/responses/"+id+"/cancel", ``, openAIAuth)
	if resp.StatusCode != 200 || get(t, obj(t, b), "status") != "cancelled" {
		t.Fatalf("cancel %d %s", resp.StatusCode, b)
	}
	_, b = do(t, s.URL+"/v1/responses", `{"model":"m","input":"now"}`, openAIAuth)
	resp, b = do(t, s.URL+"/v1/responses/"+obj(t, b)["id"].(string)+"/cancel", ``, openAIAuth)
	if resp.StatusCode != 400 || !strings.Contains(get(t, obj(t, b), "error", "message").(string), "background") {
		t.Fatalf("cancel of a foreground response: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(t, s.URL+"/v1/responses/resp_nope/cancel", ``, openAIAuth); resp.StatusCode != 404 {
		t.Fatalf("cancel of an unknown id: %d", resp.StatusCode)
	}
}
