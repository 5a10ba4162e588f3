package gen

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

// The offsets of a stored stream's events (response.wire.events[].ms): the
// first event after firstEventMS, one every eventGapMS.
const (
	firstEventMS = 320
	eventGapMS   = 12
)

// asSent stores it's answer as record stores a streamed call (format 1.2.0,
// response.wire): the stream its format synthesizes from the body (usage
// included) cut into events by the format's framing, at recorded offsets,
// and no body; the fields are those of the answer the events assemble to,
// as record derives them.
func asSent(it snapshottest.Item) snapshottest.Item {
	f := FormatOf(it)
	var stream bytes.Buffer
	if err := f.SynthesizeStream(it.Response.Body, true, &stream, nil); err != nil {
		panic(fmt.Sprintf("bench/gen: stream of a generated %s item: %v", f.Endpoint(), err)) // a generator bug
	}
	fr := provider.FramingOf(f)
	ws := &snapshot.WireStream{Framing: fr.Name()}
	c := fr.NewCapture(func(ev snapshot.WireEvent) {
		ev.MS = firstEventMS + eventGapMS*int64(len(ws.Events))
		ws.Events = append(ws.Events, ev)
	})
	if _, err := c.Write(stream.Bytes()); err != nil {
		panic(err)
	}
	if err := c.Close(); err != nil {
		panic(err)
	}
	body, err := provider.AssembleWire(f, ws)
	if err != nil {
		panic(err)
	}
	fields, err := f.Fields(body)
	if err != nil {
		panic(err)
	}
	it.Response.Fields, it.Response.Body, it.Response.Events, it.Response.Stream = fields, nil, ws, true
	return it
}

// FormatOf is the wire format of it (its key endpoint's; format 1.0.0's
// rule when it names none).
func FormatOf(it snapshottest.Item) provider.Format {
	e := it.Endpoint
	if e == "" {
		e = registry.EndpointOf100(it.Provider, it.Request)
	}
	return registry.Lookup(provider.Name(it.Provider), e)
}

// wireItem is call i as an Anthropic message recorded streamed: the
// conversation and answer of Chat's Anthropic items, stored as its events.
func wireItem(i int) snapshottest.Item {
	it := anthropicItem(i)
	return asSent(withFields(it, it.Response.Body, it.Response.LatencyMS))
}

const (
	// bedrockModel is the model id of the Bedrock calls; ":" makes the
	// key's percent-decoding count.
	bedrockModel = "anthropic.claude-3-5-haiku-20241022-v1:0"
	// bedrockPath is its path prefix as the AWS SDKs send it: the model id
	// percent-encoded, ":" as %3A.
	bedrockPath = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/"
)

// bedrockItem is call i as a Bedrock Converse call recorded by
// ConverseStream (bedrockCall), its answer (one text block, stopReason,
// usage, metrics) stored as its event-stream frames.
func bedrockItem(i int) snapshottest.Item {
	req, body := bedrockCall(i)
	it := snapshottest.Item{Provider: "bedrock", Endpoint: provider.Endpoint("/model/" + bedrockModel + "/converse"), Request: req,
		Source: source.Source{File: "internal/agents/answer.go", Line: 30 + i%50, Function: "answerTicket"}}
	return asSent(withFields(it, body, 650))
}

// bedrockCall is call i as Converse holds it: the stored request (system,
// the three turns as messages of text blocks, inferenceConfig with
// temperature 0 and maxTokens, the path's model) and the answer's body.
func bedrockCall(i int) (request, body map[string]any) {
	system, first, reply, user, content, in, out := conversation(i)
	text := func(s string) []any { return []any{map[string]any{"text": s}} }
	request = map[string]any{
		"model":  bedrockModel,
		"system": text(system),
		"messages": []any{
			map[string]any{"role": "user", "content": text(first)},
			map[string]any{"role": "assistant", "content": text(reply)},
			map[string]any{"role": "user", "content": text(user)},
		},
		"inferenceConfig": map[string]any{"temperature": int64(0), "maxTokens": int64(512)},
	}
	body = map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": text(content)}},
		"stopReason": "end_turn",
		"usage":      map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out},
		"metrics":    map[string]any{"latencyMs": int64(600 + i%200)},
	}
	return request, body
}

// bedrockRequest is call i as the AWS SDKs send it, unsigned: the body
// without the model (the path carries it) to …/converse, or
// …/converse-stream when stream is set.
func bedrockRequest(i int, stream bool) Request {
	body, _ := bedrockCall(i)
	delete(body, "model")
	op := "converse"
	if stream {
		op = "converse-stream"
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return Request{Path: bedrockPath + op, Header: h, Body: marshal(body)}
}

// NeedsSigV4 reports whether k's calls are signed with AWS SigV4 (the
// caller signs them for the host it calls).
func (k Kind) NeedsSigV4() bool { return k == Bedrock }

// URLPath is r's path as a server reads it (net/http's URL.Path):
// percent-decoded, without the query. registry.Parse takes it.
func (r Request) URLPath() string {
	u, err := url.Parse(r.Path)
	if err != nil {
		panic(err) // generated paths always parse
	}
	return u.Path
}
