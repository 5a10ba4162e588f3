package messages_test

import (
	"encoding/json"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/anthropic/messages"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestKeyRequest(t *testing.T) {
	in := `{"model":"c","stream":true,"system":"be brief","messages":[
	  {"role":"user","content":"hi"},
	  {"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_B","name":"f","input":{}},{"type":"tool_use","id":"toolu_A","name":"g","input":{}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"1"},{"type":"tool_result","tool_use_id":"toolu_B","content":"2"}]}]}`
	req, err := provider.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := snapshot.Canonical(req)
	got, _ := json.Marshal(messages.New().KeyRequest(req, nil))
	want := `{"messages":[{"content":[{"text":"hi","type":"text"}],"role":"user"},{"content":[{"text":"x","type":"text"},{"id":"call_1","input":{},"name":"f","type":"tool_use"},{"id":"call_2","input":{},"name":"g","type":"tool_use"}],"role":"assistant"},{"content":[{"content":"1","tool_use_id":"call_2","type":"tool_result"},{"content":"2","tool_use_id":"call_1","type":"tool_result"}],"role":"user"}],"model":"c","system":[{"text":"be brief","type":"text"}]}`
	if string(got) != want {
		t.Errorf("KeyRequest =\n%s\nwant\n%s", got, want)
	}
	if after, _ := snapshot.Canonical(req); string(after) != string(before) {
		t.Error("KeyRequest modified its input")
	}
}

func TestErrorBody(t *testing.T) {
	if got := string(messages.New().ErrorBody("not_found_error", "ignored", "no <snapshot>")); got != `{"type":"error","error":{"type":"not_found_error","message":"no <snapshot>"}}` {
		t.Errorf("ErrorBody = %s", got)
	}
}
