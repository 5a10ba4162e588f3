package provider

import (
	"fmt"
	"io"
	"maps"
)

// responsesFinalEvent names the terminal event of a response by its status.
var responsesFinalEvent = map[string]string{"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}

// SynthesizeStream writes the Responses stream of a stored response object
// (replay of a streamed request; DESIGN §12.9 item 12), deterministic, one
// Write (and flush) per event, each written as soon as it is built:
// response.created and response.in_progress (the response with status
// "in_progress", no output, no usage), then per output item
// response.output_item.added (the item empty: no content, summary or
// arguments yet, status "in_progress"), its parts — message parts
// content_part.added, one output_text.delta (or refusal.delta) with the whole
// text, output_text.done (refusal.done), content_part.done; function calls
// one function_call_arguments.delta and function_call_arguments.done;
// reasoning summaries reasoning_summary_part.added, one
// reasoning_summary_text.delta, reasoning_summary_text.done,
// reasoning_summary_part.done, and reasoning_text parts one
// reasoning_text.delta and reasoning_text.done — then
// response.output_item.done with the item whole; last response.completed
// (response.incomplete, response.failed by status) with the response
// verbatim. Every event has `event:` and data {"type", "sequence_number"
// (from 0), …}. includeUsage is ignored: Responses streams always carry
// usage. A body that cannot be streamed (no output array, an unknown status)
// is an error wrapping ErrMalformed, written before any event.
func (ResponsesWire) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	status, _ := body["status"].(string)
	last, ok := responsesFinalEvent[status]
	if !ok {
		return fmt.Errorf("%w: status %q has no terminal stream event", ErrMalformed, status)
	}
	output, ok := body["output"].([]any)
	if !ok {
		return fmt.Errorf("%w: /output is missing or not an array", ErrMalformed)
	}
	e := &responsesEmitter{w: w, flush: flush}
	start := maps.Clone(body)
	start["status"] = "in_progress"
	start["output"] = []any{}
	start["usage"] = nil
	if _, ok := start["incomplete_details"]; ok {
		start["incomplete_details"] = nil
	}
	if _, ok := start["error"]; ok {
		start["error"] = nil
	}
	e.send("response.created", "response", start)
	e.send("response.in_progress", "response", start)
	for i, v := range output {
		it, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /output/%d is %s, not an object", ErrMalformed, i, TypeName(v))
		}
		e.item(i, it)
	}
	e.send(last, "response", body)
	return e.err
}

// responsesEmitter writes numbered events until the first error.
type responsesEmitter struct {
	w     io.Writer
	flush func()
	seq   int64
	err   error
}

// send writes one event: type and sequence_number, then kv pairs.
func (e *responsesEmitter) send(typ string, kv ...any) {
	if e.err != nil {
		return
	}
	fields := append([]any{"type", typ, "sequence_number", Num(e.seq)}, kv...)
	e.seq++
	ev, err := NamedEvent(typ, Ordered(fields...))
	if err != nil {
		e.err = err
		return
	}
	e.err = WriteEvents([][]byte{ev}, e.w, e.flush)
}

// item writes the events of output item i.
func (e *responsesEmitter) item(i int, it map[string]any) {
	idx := Num(int64(i))
	id := it["id"]
	added := maps.Clone(it)
	switch it["type"] {
	case "message":
		added["content"] = []any{}
		added["status"] = "in_progress"
	case "function_call":
		added["arguments"] = ""
		added["status"] = "in_progress"
	case "reasoning":
		added["summary"] = []any{}
		if _, ok := added["content"]; ok {
			added["content"] = []any{}
		}
	}
	e.send("response.output_item.added", "output_index", idx, "item", added)
	switch it["type"] {
	case "message":
		parts, _ := it["content"].([]any)
		for j, p := range parts {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			at := []any{"item_id", id, "output_index", idx, "content_index", Num(int64(j))}
			e.send("response.content_part.added", append(at, "part", responsesEmptyPart(pm))...)
			switch pm["type"] {
			case "output_text":
				logprobs := pm["logprobs"]
				if logprobs == nil {
					logprobs = []any{}
				}
				e.send("response.output_text.delta", append(at, "delta", pm["text"], "logprobs", logprobs)...)
				e.send("response.output_text.done", append(at, "text", pm["text"], "logprobs", logprobs)...)
			case "refusal":
				e.send("response.refusal.delta", append(at, "delta", pm["refusal"])...)
				e.send("response.refusal.done", append(at, "refusal", pm["refusal"])...)
			}
			e.send("response.content_part.done", append(at, "part", pm)...)
		}
	case "function_call":
		e.send("response.function_call_arguments.delta", "item_id", id, "output_index", idx, "delta", it["arguments"])
		e.send("response.function_call_arguments.done", "item_id", id, "output_index", idx, "name", it["name"], "arguments", it["arguments"])
	case "reasoning":
		summary, _ := it["summary"].([]any)
		for k, p := range summary {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			at := []any{"item_id", id, "output_index", idx, "summary_index", Num(int64(k))}
			e.send("response.reasoning_summary_part.added", append(at, "part", map[string]any{"type": pm["type"], "text": ""})...)
			e.send("response.reasoning_summary_text.delta", append(at, "delta", pm["text"])...)
			e.send("response.reasoning_summary_text.done", append(at, "text", pm["text"])...)
			e.send("response.reasoning_summary_part.done", append(at, "part", pm)...)
		}
		content, _ := it["content"].([]any)
		for k, p := range content {
			pm, ok := p.(map[string]any)
			if !ok || pm["type"] != "reasoning_text" {
				continue
			}
			at := []any{"item_id", id, "output_index", idx, "content_index", Num(int64(k))}
			e.send("response.reasoning_text.delta", append(at, "delta", pm["text"])...)
			e.send("response.reasoning_text.done", append(at, "text", pm["text"])...)
		}
	}
	e.send("response.output_item.done", "output_index", idx, "item", it)
}

// responsesEmptyPart is a content part as content_part.added shows it: no text yet.
func responsesEmptyPart(p map[string]any) map[string]any {
	c := maps.Clone(p)
	switch p["type"] {
	case "output_text":
		c["text"] = ""
		c["annotations"] = []any{}
		if _, ok := c["logprobs"]; ok {
			c["logprobs"] = []any{}
		}
	case "refusal":
		c["refusal"] = ""
	}
	return c
}
