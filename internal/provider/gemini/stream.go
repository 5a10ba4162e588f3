package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/traceforge/traceforge/internal/provider"
)

// assembler builds the stored body of a :streamGenerateContent?alt=sse
// stream (DESIGN §12.9 item 1): the last chunk, with
// candidates[0].content.parts replaced by every chunk's parts in order (not
// merged: adjacent text parts stay apart, as the SDKs hand them out). When
// the last chunk carries no candidate, the last candidate sent is used. A
// stream is complete when a chunk's candidates[0] had a finishReason; a
// `data: {"error":…}` event breaks it (provider.ErrStreamError).
type assembler struct {
	sse       provider.SSEParser
	err       error
	streamErr error
	last      map[string]any // the last chunk
	cand      map[string]any // the last candidates[0] sent
	role      any
	parts     []any
	finished  bool
}

func (a *assembler) Write(p []byte) (int, error) {
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

func (a *assembler) event(ev provider.SSEEvent) error {
	if a.streamErr != nil {
		return nil
	}
	v, err := provider.DecodeValue(bytes.TrimSpace(ev.Data))
	if err != nil {
		return fmt.Errorf("event %d: %w", ev.Num, err)
	}
	chunk, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d: data is %s, not an object", provider.ErrMalformed, ev.Num, provider.TypeName(v))
	}
	if _, ok := chunk["error"]; ok || ev.Name == "error" {
		a.streamErr = provider.StreamError(ev.Num, chunk)
		return nil
	}
	a.last = chunk
	cands, present := chunk["candidates"]
	if !present || cands == nil {
		return nil
	}
	list, ok := cands.([]any)
	if !ok {
		return fmt.Errorf("%w: event %d: /candidates is %s, not an array", provider.ErrMalformed, ev.Num, provider.TypeName(cands))
	}
	if len(list) == 0 {
		return nil
	}
	cand, ok := list[0].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d: /candidates/0 is %s, not an object", provider.ErrMalformed, ev.Num, provider.TypeName(list[0]))
	}
	a.cand = cand
	parts, err := candidateParts(cand)
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

func (a *assembler) Done() (map[string]any, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.streamErr != nil {
		return nil, a.streamErr
	}
	if a.last == nil {
		return nil, fmt.Errorf("%w: no chunk in %d events", provider.ErrBrokenStream, a.sse.Events())
	}
	if !a.finished {
		return nil, fmt.Errorf("%w: no chunk with candidates[0].finishReason after %d events", provider.ErrBrokenStream, a.sse.Events())
	}
	body := provider.DeepCopy(a.last).(map[string]any)
	cand := provider.DeepCopy(a.cand).(map[string]any)
	content, _ := cand["content"].(map[string]any)
	if content == nil {
		content = map[string]any{}
	}
	content["parts"] = provider.DeepCopy(append([]any{}, a.parts...))
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

// events builds the synthesized stream of body (see SynthesizeStream).
func events(body map[string]any) ([][]byte, error) {
	cand, err := firstCandidate(body)
	if err != nil {
		return nil, err
	}
	parts, err := candidateParts(cand)
	if err != nil {
		return nil, err
	}
	content, _ := cand["content"].(map[string]any)
	var role any = "model" // a candidate without content gets the API's
	if content != nil {
		role = content["role"] // nil: the stored content has no role
	}
	// The body's other members, in the API's order, then the rest sorted.
	var top []string
	seen := map[string]bool{"candidates": true}
	for _, k := range []string{"usageMetadata", "modelVersion", "responseId"} {
		if _, ok := body[k]; ok {
			top = append(top, k)
		}
		seen[k] = true
	}
	var rest []string
	for k := range body {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	top = append(top, rest...)
	chunk := func(c any) json.Marshaler {
		kvs := []any{"candidates", []any{c}}
		for _, k := range top {
			kvs = append(kvs, k, body[k])
		}
		return provider.Ordered(kvs...)
	}
	last := func(ps []any) json.Marshaler {
		kvs := []any{"content", contentWith(content, ps, role)}
		var keys []string
		for k := range cand {
			if k != "content" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		// finishReason right after content, as the API sends it.
		if _, ok := cand["finishReason"]; ok {
			kvs = append(kvs, "finishReason", cand["finishReason"])
		}
		for _, k := range keys {
			if k != "finishReason" {
				kvs = append(kvs, k, cand[k])
			}
		}
		return provider.Ordered(kvs...)
	}
	var chunks []json.Marshaler
	for i := 0; i+1 < len(parts); i++ {
		kvs := []any{"content", contentWith(content, parts[i:i+1], role)}
		if idx, ok := cand["index"]; ok {
			kvs = append(kvs, "index", idx)
		}
		chunks = append(chunks, chunk(provider.Ordered(kvs...)))
	}
	lastParts := parts
	if len(parts) > 0 {
		lastParts = parts[len(parts)-1:]
	}
	chunks = append(chunks, chunk(last(lastParts)))
	out := make([][]byte, 0, len(chunks))
	for _, c := range chunks {
		b, err := provider.DataEvent(c)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// contentWith is the stored content object with its parts replaced by ps
// ("parts" first, "role" next unless nil, then the rest sorted).
func contentWith(content map[string]any, ps []any, role any) json.Marshaler {
	kvs := []any{"parts", ps}
	if role != nil {
		kvs = append(kvs, "role", role)
	}
	var keys []string
	for k := range content {
		if k != "parts" && k != "role" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		kvs = append(kvs, k, content[k])
	}
	return provider.Ordered(kvs...)
}
