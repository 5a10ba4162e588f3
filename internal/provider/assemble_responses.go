package provider

import (
	"bytes"
	"fmt"
)

// responsesTerminalEvents end a Responses stream; their "response" is the stored body
// (DESIGN §12.9 item 1).
var responsesTerminalEvents = map[string]bool{"response.completed": true, "response.incomplete": true, "response.failed": true}

// responsesAssembler reads a Responses stream: typed SSE events (the type is the
// `event:` field, or the data's "type" when the line is missing), each data
// a JSON object. The answer is the "response" object of the final
// response.completed, response.incomplete or response.failed event; what
// follows it is ignored. An "error" event breaks the stream
// (ErrStreamError); a stream without a terminal event is broken.
type responsesAssembler struct {
	sse       SSEParser
	err       error // malformed input: Write and Done report it
	streamErr error
	body      map[string]any
	held      int64 // bytes of the terminal event's data
}

var _ SizedAssembler = (*responsesAssembler)(nil)

// Held is the size of the response the responsesAssembler keeps: the data of the
// terminal event once it arrived, else nothing (the events before it are
// read and dropped), so the snapshot cap applies to the response, not to
// the stream, which repeats it in deltas and done events.
func (a *responsesAssembler) Held() int64 { return a.held }

func (a *responsesAssembler) Write(p []byte) (int, error) {
	if a.err != nil {
		return len(p), a.err
	}
	if a.streamErr != nil || a.body != nil {
		return len(p), nil
	}
	if err := a.sse.Feed(p, a.event); err != nil {
		a.err = err
		return len(p), err
	}
	return len(p), nil
}

func (a *responsesAssembler) event(ev SSEEvent) error {
	if a.streamErr != nil || a.body != nil {
		return nil
	}
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		return nil
	}
	v, err := DecodeEvent(data)
	if err != nil {
		return fmt.Errorf("event %d (%s): %w", ev.Num, ev.Name, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d (%s): data is %s, not an object", ErrMalformed, ev.Num, ev.Name, TypeName(v))
	}
	name := ev.Name
	if name == "" {
		name, _ = m["type"].(string)
	}
	switch {
	case name == "error":
		a.streamErr = StreamError(ev.Num, m)
	case responsesTerminalEvents[name]:
		resp, ok := m["response"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: event %d (%s): /response is missing or not an object", ErrMalformed, ev.Num, name)
		}
		a.body, a.held = resp, int64(len(data))
	}
	return nil
}

// Done returns the final response object, or why there is none.
func (a *responsesAssembler) Done() (map[string]any, error) {
	switch {
	case a.err != nil:
		return nil, a.err
	case a.streamErr != nil:
		return nil, a.streamErr
	case a.body == nil:
		return nil, fmt.Errorf("%w: no response.completed, response.incomplete or response.failed event after %d event(s)", ErrBrokenStream, a.sse.Events())
	}
	return a.body, nil
}
