package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/openai/chat"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestKeyRequest(t *testing.T) {
	in := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[
	  {"role":"user","content":"hi"},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"call_Zz","type":"function"},{"id":"call_Aa","type":"function"},"odd"]},
	  {"role":"tool","tool_call_id":"call_Aa","content":"1"},
	  {"role":"tool","tool_call_id":"call_Zz","content":"2"},
	  "odd"]}`
	req, err := provider.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := snapshot.Canonical(req)
	got, _ := json.Marshal(chat.New().KeyRequest(req, nil))
	want := `{"messages":[{"content":"hi","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"id":"call_1","type":"function"},{"id":"call_2","type":"function"},"odd"]},{"content":"1","role":"tool","tool_call_id":"call_2"},{"content":"2","role":"tool","tool_call_id":"call_1"},"odd"],"model":"m"}`
	if string(got) != want {
		t.Errorf("KeyRequest =\n%s\nwant\n%s", got, want)
	}
	if after, _ := snapshot.Canonical(req); string(after) != string(before) {
		t.Error("KeyRequest modified its input")
	}
}

func TestOwnsRecordAndRoute(t *testing.T) {
	f := chat.New()
	if !f.OwnsRecord(map[string]any{"messages": []any{}}) || f.OwnsRecord(map[string]any{"prompt": "x"}) {
		t.Error("chat owns stored requests with messages")
	}
	for path, want := range map[string]bool{"/v1/chat/completions": true, "/chat/completions": true, "/v1/completions": false, "/v1/chat/completions/x": false} {
		if _, ok := f.Route("POST", path); ok != want {
			t.Errorf("Route(POST %s) = %v", path, ok)
		}
	}
}
