package check_test

import (
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// workedStream is the streamed record docs/format.md shows, decoded.
func workedStream(t *testing.T) (block []byte, doc map[string]any) {
	t.Helper()
	md, err := os.ReadFile("../../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json worked-stream\n(.*?)```").FindSubmatch(md)
	if m == nil {
		t.Fatal("docs/format.md lost its worked-stream block")
	}
	v, err := snapshot.Decode(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return m[1], v.(map[string]any)
}

// TestFormatDocWorkedStream: the streamed record docs/format.md shows
// passes every check verify runs, is byte for byte what traceforge
// writes, and its body is what its events assemble to.
func TestFormatDocWorkedStream(t *testing.T) {
	block, doc := workedStream(t)
	s, fs := check.CheckBytes("anthropic/e9c69e9feee6.json", block, check.Options{Config: &check.Config{}})
	for _, f := range fs {
		if f.Severity == finding.Error {
			t.Errorf("%s", f.Error())
		}
	}
	if s == nil || s.Record.Response.Events == nil || len(s.Record.Response.Events.Events) != 8 {
		t.Fatalf("the example does not read as a stream of 8 events: %+v", s)
	}
	if body := s.Record.Response.Body; body == nil || body["stop_reason"] != "end_turn" || body["id"] != "msg_fake00000001" {
		t.Fatalf("the assembled body is %v", body)
	}
	out, err := snapshot.MarshalFile(doc)
	if err != nil || string(out) != string(block) {
		t.Errorf("the documented file is not what traceforge writes:\n%s", out)
	}
}

// rewrite edits the worked stream's record, rehashes it and checks it.
func rewrite(t *testing.T, edit func(resp, wire map[string]any, events []any)) finding.Findings {
	t.Helper()
	_, doc := workedStream(t)
	rec := doc["snapshots"].([]any)[0].(map[string]any)
	resp := rec["response"].(map[string]any)
	wire := resp["wire"].(map[string]any)
	edit(resp, wire, wire["events"].([]any))
	if err := snapshot.Rehash(rec); err != nil {
		t.Fatal(err)
	}
	doc["hash"], _ = snapshot.FileHash(snapshot.Version, []string{rec["hash"].(string)})
	_, fs := check.CheckDocument("anthropic/e9c69e9feee6.json", "anthropic", doc, check.Options{Config: &check.Config{}})
	return fs
}

// TestWireRefused: a wire with an unknown framing, an event with two
// payloads or none, a negative offset, an unknown member, base64 that does
// not decode, or events that do not assemble is refused, at the wire's
// pointer.
func TestWireRefused(t *testing.T) {
	for name, c := range map[string]struct {
		edit    func(resp, wire map[string]any, events []any)
		pointer string
	}{
		"framing":      {func(_, w map[string]any, _ []any) { w["framing"] = "websocket" }, "/snapshots/0/response/wire"},
		"two payloads": {func(_, _ map[string]any, ev []any) { ev[0].(map[string]any)["data_b64"] = "AA==" }, "/snapshots/0/response/wire"},
		"no payload":   {func(_, _ map[string]any, ev []any) { delete(ev[0].(map[string]any), "data") }, "/snapshots/0/response/wire"},
		"negative ms":  {func(_, _ map[string]any, ev []any) { ev[0].(map[string]any)["ms"] = int64(-1) }, "/snapshots/0/response/wire"},
		"unknown":      {func(_, _ map[string]any, ev []any) { ev[0].(map[string]any)["retry"] = "5" }, "/snapshots/0/response/wire"},
		"bad base64": {func(_, _ map[string]any, ev []any) {
			e := ev[0].(map[string]any)
			delete(e, "data")
			e["data_b64"] = "not base64!"
		}, "/snapshots/0/response/wire"},
		"no message_stop": {func(_, w map[string]any, ev []any) { w["events"] = ev[:len(ev)-1] }, "/snapshots/0/response/wire"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := rewrite(t, c.edit)
			found := false
			for _, f := range fs {
				if f.Severity == finding.Error && strings.HasPrefix(f.Pointer, c.pointer) && f.File == "anthropic/e9c69e9feee6.json" {
					found = true
				}
			}
			if !found {
				t.Fatalf("not refused at %s: %v", c.pointer, fs)
			}
		})
	}
}

// TestSecretInWire: a key inside a stream's events — in an event's data,
// or inside a base64 payload — is found like any other string, at the
// event's pointer, and never quoted.
func TestSecretInWire(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("a", 93) + "AA"
	for name, c := range map[string]struct {
		edit    func(resp, wire map[string]any, events []any)
		pointer string
	}{
		"data": {func(_, _ map[string]any, ev []any) {
			e := ev[2].(map[string]any)
			e["data"] = `{"type": "ping", "note": "` + key + `"}`
		}, "/snapshots/0/response/wire/events/2/data"},
		"data_b64": {func(_, _ map[string]any, ev []any) {
			e := ev[2].(map[string]any)
			delete(e, "data")
			e["data_b64"] = base64.StdEncoding.EncodeToString([]byte("{\"type\": \"ping\", \"k\": \"" + key + "\"}\xff"))
		}, "/snapshots/0/response/wire/events/2/data_b64"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := rewrite(t, c.edit)
			found := false
			for _, f := range fs {
				if f.Rule == check.RuleSecret && f.Pointer == c.pointer {
					found = true
				}
				if strings.Contains(f.Message, key) {
					t.Errorf("a finding quotes the key: %s", f.Message)
				}
			}
			if !found {
				t.Fatalf("the key in the wire was not found at %s: %v", c.pointer, fs)
			}
		})
	}
}
