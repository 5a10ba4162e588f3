package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// wireTap is one test's pair of stream tap files: every client appends the
// raw body of each streamed answer it reads to the file TF_E2E_WIRE names
// (internal/wiretap for the Go clients, node/common.mjs for the Node ones),
// one for the record run and one for the replay. checkWire then holds
// replay to serving the recorded streams event for event.
type wireTap struct{ dir string }

func newWireTap(t *testing.T) wireTap { return wireTap{dir: t.TempDir()} }

func (w wireTap) file(run string) string { return filepath.Join(w.dir, run+".wire") }

// env is the TF_E2E_WIRE setting of run ("record" or "replay"); baseEnv
// strips the variable, so each of the two runs adds it.
func (w wireTap) env(run string) string { return "TF_E2E_WIRE=" + w.file(run) }

// wireResponse is one tapped streamed answer, split into its events.
type wireResponse struct {
	contentType string
	size        int // body bytes
	events      []wireEvent
}

// wireEvent is one event: an SSE event's type, last event id and data; an
// NDJSON line (data); an AWS event-stream frame's headers and payload (data).
type wireEvent struct {
	event, id, data string
	headers         map[string]string
}

func (e wireEvent) equal(o wireEvent) bool {
	return e.event == o.event && e.id == o.id && e.data == o.data && maps.Equal(e.headers, o.headers)
}

func (e wireEvent) String() string {
	if e.headers != nil {
		keys := slices.Sorted(maps.Keys(e.headers))
		var hs []string
		for _, k := range keys {
			hs = append(hs, fmt.Sprintf("%s=%q", k, e.headers[k]))
		}
		return fmt.Sprintf("headers {%s} payload %q", strings.Join(hs, " "), e.data)
	}
	return fmt.Sprintf("event %q id %q data %q", e.event, e.id, e.data)
}

// checkWire compares the streams the client read at record and at replay:
// as many streamed answers, each with the same events. At record the
// client must have tapped one stream per snapshot in dir that holds
// response.wire, and a stream mode must have some, so that a tap that
// stopped working fails rather than compares nothing.
func (w wireTap) checkWire(t *testing.T, dir, mode string) {
	t.Helper()
	rec, rep := readWire(t, w.file("record")), readWire(t, w.file("replay"))
	streamed := wireSnapshots(t, dir)
	if (mode == "stream" || mode == "helper") && streamed == 0 {
		t.Errorf("mode %s: no snapshot holds response.wire", mode)
	}
	if len(rec) != streamed {
		t.Fatalf("the client tapped %d streamed answer(s) at record, the snapshots hold %d (response.wire): is the stream tap (TF_E2E_WIRE) in the client's transport?", len(rec), streamed)
	}
	if len(rep) != len(rec) {
		t.Fatalf("replay streamed %d answer(s), record %d", len(rep), len(rec))
	}
	for i := range rec {
		t.Logf("streamed answer %d: %s, %d events", i+1, rec[i].contentType, len(rec[i].events))
		if msg := diffWire(rec[i], rep[i]); msg != "" {
			t.Errorf("streamed answer %d of %d (%s; recorded %d bytes, replayed %d) is not replayed event for event: %s",
				i+1, len(rec), rec[i].contentType, rec[i].size, rep[i].size, msg)
		}
	}
}

// diffWire describes the first difference between two streams ("" when
// there is none).
func diffWire(rec, rep wireResponse) string {
	if rec.contentType != rep.contentType {
		return fmt.Sprintf("Content-Type %q recorded, %q replayed", rec.contentType, rep.contentType)
	}
	for j := 0; j < max(len(rec.events), len(rep.events)); j++ {
		if j < len(rec.events) && j < len(rep.events) && rec.events[j].equal(rep.events[j]) {
			continue
		}
		show := func(evs []wireEvent) string {
			if j < len(evs) {
				return evs[j].String()
			}
			return "(none)"
		}
		return fmt.Sprintf("%d events recorded, %d replayed; event %d differs\n  recorded: %s\n  replayed: %s",
			len(rec.events), len(rep.events), j+1, show(rec.events), show(rep.events))
	}
	return ""
}

// wireSnapshots counts the snapshots below dir whose response holds wire.
func wireSnapshots(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for path, text := range readTree(t, dir) {
		if !strings.HasSuffix(path, ".json") {
			continue
		}
		var doc struct {
			Snapshots []struct {
				Response struct {
					Wire json.RawMessage `json:"wire"`
				} `json:"response"`
			} `json:"snapshots"`
		}
		if json.Unmarshal([]byte(text), &doc) != nil {
			continue // not a snapshot file
		}
		for _, s := range doc.Snapshots {
			if len(s.Response.Wire) > 0 && string(s.Response.Wire) != "null" {
				n++
			}
		}
	}
	return n
}

// readWire parses a tap file (none: no streamed answer).
func readWire(t *testing.T, file string) []wireResponse {
	t.Helper()
	raw, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []wireResponse
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			ContentType string `json:"content_type"`
			B64         string `json:"b64"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		body, err := base64.StdEncoding.DecodeString(line.B64)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		r := wireResponse{contentType: line.ContentType, size: len(body)}
		switch line.ContentType {
		case "text/event-stream":
			r.events = parseSSE(body)
		case "application/x-ndjson":
			r.events = parseNDJSON(body)
		case "application/vnd.amazon.eventstream":
			if r.events, err = parseEventStream(body); err != nil {
				t.Fatalf("%s: %v", filepath.Base(file), err)
			}
		default:
			t.Fatalf("%s: content type %q", filepath.Base(file), line.ContentType)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parseSSE splits a text/event-stream body into the events an EventSource
// would dispatch (WHATWG HTML, "Interpreting an event stream"): lines end
// in CRLF, LF or CR; comments are ignored; data lines are joined with
// "\n"; the id is the last event id; an event with no data is not
// dispatched, nor one the body ends in the middle of. The type stays empty
// when no "event:" line names it (SDKs tell that from "message").
func parseSSE(body []byte) []wireEvent {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var out []wireEvent
	var event, lastID string
	var data strings.Builder
	for len(body) > 0 {
		end := bytes.IndexAny(body, "\r\n")
		if end < 0 {
			break // an unterminated last line
		}
		line := string(body[:end])
		if body[end] == '\r' && end+1 < len(body) && body[end+1] == '\n' {
			end++
		}
		body = body[end+1:]
		if line == "" {
			if data.Len() > 0 {
				out = append(out, wireEvent{event: event, id: lastID, data: strings.TrimSuffix(data.String(), "\n")})
			}
			event = ""
			data.Reset()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.Contains(value, "\x00") {
				lastID = value
			}
		}
	}
	return out
}

// parseNDJSON returns each non-blank line.
func parseNDJSON(body []byte) []wireEvent {
	var out []wireEvent
	for _, line := range strings.Split(string(body), "\n") {
		if strings.TrimSpace(line) != "" {
			out = append(out, wireEvent{data: line})
		}
	}
	return out
}

// parseEventStream decodes AWS event-stream frames: headers (as strings)
// and payload.
func parseEventStream(body []byte) ([]wireEvent, error) {
	var out []wireEvent
	r := bytes.NewReader(body)
	dec := eventstream.NewDecoder()
	for r.Len() > 0 {
		msg, err := dec.Decode(r, nil)
		if err != nil {
			return nil, fmt.Errorf("event-stream frame %d: %v", len(out)+1, err)
		}
		ev := wireEvent{data: string(msg.Payload), headers: map[string]string{}}
		for _, h := range msg.Headers {
			ev.headers[h.Name] = h.Value.String()
		}
		out = append(out, ev)
	}
	return out, nil
}

// TestWireParsers: the tap file parsers on hand-made bodies.
func TestWireParsers(t *testing.T) {
	sse := parseSSE([]byte("\xef\xbb\xbf: comment\r\nevent: a\r\nid: 1\r\ndata: x\r\ndata:y\r\n\r\nretry: 5\n\ndata: z\r\rdata: cut"))
	want := []wireEvent{{event: "a", id: "1", data: "x\ny"}, {id: "1", data: "z"}}
	if !slices.EqualFunc(sse, want, wireEvent.equal) {
		t.Errorf("parseSSE = %v, want %v", sse, want)
	}
	if nd := parseNDJSON([]byte("{\"a\":1}\n \n{\"b\":2}")); len(nd) != 2 || nd[1].data != `{"b":2}` {
		t.Errorf("parseNDJSON = %v", nd)
	}
	var buf bytes.Buffer
	msg := eventstream.Message{Headers: eventstream.Headers{{Name: ":event-type", Value: eventstream.StringValue("chunk")}}, Payload: []byte(`{"p":1}`)}
	if err := eventstream.NewEncoder().Encode(&buf, msg); err != nil {
		t.Fatal(err)
	}
	evs, err := parseEventStream(buf.Bytes())
	if err != nil || len(evs) != 1 || evs[0].headers[":event-type"] != "chunk" || evs[0].data != `{"p":1}` {
		t.Errorf("parseEventStream = %v, %v", evs, err)
	}
	if _, err := parseEventStream(buf.Bytes()[:buf.Len()-1]); err == nil {
		t.Error("parseEventStream: no error for a cut frame")
	}
	a := wireResponse{contentType: "text/event-stream", events: want}
	b := wireResponse{contentType: "text/event-stream", events: want[:1]}
	if d := diffWire(a, b); !strings.Contains(d, "event 2 differs") || !strings.Contains(d, "(none)") {
		t.Errorf("diffWire = %q", d)
	}
}
