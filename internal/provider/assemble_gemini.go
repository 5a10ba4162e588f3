package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
)

// geminiAssembler builds the stored body of a :streamGenerateContent?alt=sse
// stream (DESIGN §12.9 item 1): the last chunk, with
// candidates[0].content.parts replaced by every chunk's parts in order (not
// merged: adjacent text parts stay apart, as the SDKs hand them out). When
// the last chunk carries no candidate, the last candidate sent is used. A
// stream is complete when a chunk's candidates[0] had a finishReason; a
// `data: {"error":…}` event breaks it (ErrStreamError).
type geminiAssembler struct {
	sse       SSEParser
	err       error
	streamErr error
	last      map[string]any // the last chunk
	cand      map[string]any // the last candidates[0] sent
	role      any
	parts     []any
	finished  bool
}

func (a *geminiAssembler) Write(p []byte) (int, error) {
	if a.err != nil {
		return len(p), a.err
	}
	if a.streamErr != nil {
		return len(p), nil
	}
	if err := a.sse.Feed(p, a.event); err != nil {
		a.err = err
		return len(p), err
	}
	return len(p), nil
}

func (a *geminiAssembler) event(ev SSEEvent) error {
	if a.streamErr != nil {
		return nil
	}
	v, err := DecodeEvent(bytes.TrimSpace(ev.Data))
	if err != nil {
		return fmt.Errorf("event %d: %w", ev.Num, err)
	}
	chunk, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d: data is %s, not an object", ErrMalformed, ev.Num, TypeName(v))
	}
	if _, ok := chunk["error"]; ok || ev.Name == "error" {
		a.streamErr = StreamError(ev.Num, chunk)
		return nil
	}
	a.last = chunk
	cands, present := chunk["candidates"]
	if !present || cands == nil {
		return nil
	}
	list, ok := cands.([]any)
	if !ok {
		return fmt.Errorf("%w: event %d: /candidates is %s, not an array", ErrMalformed, ev.Num, TypeName(cands))
	}
	if len(list) == 0 {
		return nil
	}
	cand, ok := list[0].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d: /candidates/0 is %s, not an object", ErrMalformed, ev.Num, TypeName(list[0]))
	}
	a.cand = cand
	parts, err := geminiCandidateParts(cand)
	if err != nil {
		return fmt.Errorf("event %d: %w", ev.Num, err)
	}
	a.parts = append(a.parts, parts...)
	if c, ok := cand["content"].(map[string]any); ok {
		if r, ok := c["role"]; ok {
			a.role = r
		}
	}
	if fr, ok := cand["finishReason"].(string); ok && fr != "" {
		a.finished = true
	}
	return nil
}

func (a *geminiAssembler) Done() (map[string]any, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.streamErr != nil {
		return nil, a.streamErr
	}
	if a.last == nil {
		return nil, fmt.Errorf("%w: no chunk in %d events", ErrBrokenStream, a.sse.Events())
	}
	if !a.finished {
		return nil, fmt.Errorf("%w: no chunk with candidates[0].finishReason after %d events", ErrBrokenStream, a.sse.Events())
	}
	body := DeepCopy(a.last).(map[string]any)
	cand := DeepCopy(a.cand).(map[string]any)
	content, _ := cand["content"].(map[string]any)
	if content == nil {
		content = map[string]any{}
	}
	content["parts"] = DeepCopy(append([]any{}, a.parts...))
	if _, ok := content["role"]; !ok && a.role != nil {
		content["role"] = a.role
	}
	cand["content"] = content
	cands, _ := body["candidates"].([]any)
	if len(cands) == 0 {
		cands = []any{cand}
	} else {
		cands[0] = cand
	}
	body["candidates"] = cands
	return body, nil
}

// geminiEvents builds the synthesized stream of body (see SynthesizeStream).
func geminiEvents(body map[string]any) ([][]byte, error) {
	cand, err := geminiFirstCandidate(body)
	if err != nil {
		return nil, err
	}
	parts, err := geminiCandidateParts(cand)
	if err != nil {
		return nil, err
	}
	content, _ := cand["content"].(map[string]any)
	if content == nil {
		content = map[string]any{"role": "model"} // the API's, for a candidate without content
	}
	// withParts is the content holding ps.
	withParts := func(ps []any) json.Marshaler {
		c := maps.Clone(content)
		c["parts"] = ps
		return OrderedFirst(c, "parts", "role")
	}
	// chunk is a GenerateContentResponse in the API's member order.
	chunk := func(c json.Marshaler) json.Marshaler {
		b := maps.Clone(body)
		b["candidates"] = []any{c}
		return OrderedFirst(b, "candidates", "usageMetadata", "modelVersion", "responseId")
	}
	var chunks []json.Marshaler
	for i := 0; i+1 < len(parts); i++ {
		c := map[string]any{"content": withParts(parts[i : i+1])}
		if idx, ok := cand["index"]; ok {
			c["index"] = idx
		}
		chunks = append(chunks, chunk(OrderedFirst(c, "content", "index")))
	}
	lastParts := parts
	if len(parts) > 0 {
		lastParts = parts[len(parts)-1:]
	}
	last := maps.Clone(cand)
	last["content"] = withParts(lastParts)
	chunks = append(chunks, chunk(OrderedFirst(last, "content", "finishReason")))
	out := make([][]byte, 0, len(chunks))
	for _, c := range chunks {
		b, err := DataEvent(c)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
