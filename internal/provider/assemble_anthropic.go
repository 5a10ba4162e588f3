package provider

import (
	"bytes"

	"fmt"
	"sort"
	"strings"
)

// anthropicAssembler builds a Messages API response from its stream, the
// way the official SDKs accumulate it: start from message_start.message;
// content_block_start puts a block at its index; content_block_delta applies
// text_delta (text), input_json_delta (partial_json accumulated and parsed at
// content_block_stop, an empty accumulation giving {}), thinking_delta,
// signature_delta and citations_delta, compaction_delta (its members
// replace the compaction block's) and any other delta type (a string member
// appended to the block's member of that name, any other value replacing
// it: nothing a delta carried is dropped, DESIGN §13.3); message_delta
// overwrites the message's stop_reason, stop_sequence (and any other member
// of its delta) and every non-null usage member; ping and unknown events
// are ignored (they have no place in the message); an
// error event breaks the stream (ErrStreamError); a stream without
// message_stop is broken. The event type is the "event:" field, or the data's
// "type" when the line is missing.
type anthropicAssembler struct {
	sse       SSEParser
	err       error
	streamErr error
	msg       map[string]any
	blocks    map[int64]*anthropicBlock
	stopped   bool
}

type anthropicBlock struct {
	block    map[string]any
	partial  strings.Builder
	jsonMode bool
	// texts accumulates the string members deltas append to (text,
	// thinking, signature) in linear time; value() puts them in block.
	texts map[string]*strings.Builder
}

// value is the block with its accumulated strings.
func (bs *anthropicBlock) value() map[string]any {
	b := DeepCopy(bs.block).(map[string]any)
	for field, sb := range bs.texts {
		prev, _ := b[field].(string)
		b[field] = prev + sb.String()
	}
	return b
}

// Held is the size of the text, thinking, signatures and tool input
// accumulated so far (SizedAssembler).
func (a *anthropicAssembler) Held() int64 {
	var n int64
	for _, bs := range a.blocks {
		n += int64(bs.partial.Len())
		for _, sb := range bs.texts {
			n += int64(sb.Len())
		}
		if s, ok := bs.block["input"].(string); ok {
			n += int64(len(s))
		}
	}
	return n
}

func (a *anthropicAssembler) Write(p []byte) (int, error) {
	if a.err != nil {
		return len(p), a.err
	}
	if a.streamErr != nil || a.stopped {
		return len(p), nil
	}
	if err := a.sse.Feed(p, a.event); err != nil {
		a.err = err
		return len(p), err
	}
	return len(p), nil
}

func (a *anthropicAssembler) event(ev SSEEvent) error {
	if a.stopped || a.streamErr != nil {
		return nil
	}
	v, err := DecodeEvent(bytes.TrimSpace(ev.Data))
	name := ev.Name
	if name == "" {
		if m, ok := v.(map[string]any); ok {
			name, _ = m["type"].(string)
		}
	}
	if name == "error" {
		a.streamErr = StreamError(ev.Num, v)
		return nil
	}
	if name == "ping" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("event %d (%s): %w", ev.Num, name, err)
	}
	data, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d (%s): data is %s, not an object", ErrMalformed, ev.Num, name, TypeName(v))
	}
	at := fmt.Sprintf("event %d (%s)", ev.Num, name)
	if name != "message_start" && a.msg == nil {
		switch name {
		case "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
			return fmt.Errorf("%w: %s before message_start", ErrMalformed, at)
		}
	}
	switch name {
	case "message_start":
		if a.msg != nil {
			return fmt.Errorf("%w: %s: second message_start", ErrMalformed, at)
		}
		m, ok := data["message"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s: /message is %s, not an object", ErrMalformed, at, TypeName(data["message"]))
		}
		a.msg = m
		if c, present := m["content"]; present && c != nil {
			arr, ok := c.([]any)
			if !ok {
				return fmt.Errorf("%w: %s: /message/content is %s, not an array", ErrMalformed, at, TypeName(c))
			}
			for i, b := range arr {
				bm, ok := b.(map[string]any)
				if !ok {
					return fmt.Errorf("%w: %s: /message/content/%d is %s, not an object", ErrMalformed, at, i, TypeName(b))
				}
				a.blocks[int64(i)] = &anthropicBlock{block: bm}
			}
		}
	case "content_block_start":
		i, err := anthropicBlockIndex(at, data)
		if err != nil {
			return err
		}
		b, ok := data["content_block"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s: /content_block is %s, not an object", ErrMalformed, at, TypeName(data["content_block"]))
		}
		a.blocks[i] = &anthropicBlock{block: b}
	case "content_block_delta":
		i, err := anthropicBlockIndex(at, data)
		if err != nil {
			return err
		}
		bs := a.blocks[i]
		if bs == nil {
			return fmt.Errorf("%w: %s: delta for block %d before its content_block_start", ErrMalformed, at, i)
		}
		d, ok := data["delta"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s: /delta is %s, not an object", ErrMalformed, at, TypeName(data["delta"]))
		}
		if err := bs.apply(at, d); err != nil {
			return err
		}
	case "content_block_stop":
		i, err := anthropicBlockIndex(at, data)
		if err != nil {
			return err
		}
		bs := a.blocks[i]
		if bs == nil {
			return fmt.Errorf("%w: %s: stop for block %d before its content_block_start", ErrMalformed, at, i)
		}
		if err := bs.finish(at); err != nil {
			return err
		}
	case "message_delta":
		if d, ok := data["delta"].(map[string]any); ok {
			for k, v := range d {
				a.msg[k] = v
			}
		}
		if u, ok := data["usage"].(map[string]any); ok {
			mu, ok := a.msg["usage"].(map[string]any)
			if !ok {
				mu = map[string]any{}
				a.msg["usage"] = mu
			}
			for k, v := range u {
				if v != nil {
					mu[k] = v
				}
			}
		}
	case "message_stop":
		a.stopped = true
	}
	return nil
}

func anthropicBlockIndex(at string, data map[string]any) (int64, error) {
	n, ok := AsInt(data["index"])
	if !ok || n < 0 || n > 1<<16 {
		return 0, fmt.Errorf("%w: %s: /index is not a small integer ≥ 0", ErrMalformed, at)
	}
	return n, nil
}

func (bs *anthropicBlock) apply(at string, d map[string]any) error {
	appendString := func(field, key string) error {
		s, ok := d[key].(string)
		if !ok {
			return fmt.Errorf("%w: %s: /delta/%s is %s, not a string", ErrMalformed, at, key, TypeName(d[key]))
		}
		if bs.texts == nil {
			bs.texts = map[string]*strings.Builder{}
		}
		sb := bs.texts[field]
		if sb == nil {
			sb = &strings.Builder{}
			bs.texts[field] = sb
		}
		sb.WriteString(s)
		return nil
	}
	switch d["type"] {
	case "text_delta":
		return appendString("text", "text")
	case "thinking_delta":
		return appendString("thinking", "thinking")
	case "signature_delta":
		return appendString("signature", "signature")
	case "input_json_delta":
		s, ok := d["partial_json"].(string)
		if !ok {
			return fmt.Errorf("%w: %s: /delta/partial_json is %s, not a string", ErrMalformed, at, TypeName(d["partial_json"]))
		}
		bs.jsonMode = true
		bs.partial.WriteString(s)
	case "citations_delta":
		prev, _ := bs.block["citations"].([]any)
		bs.block["citations"] = append(prev, d["citation"])
	case "compaction_delta":
		// The compaction's summary (and its encrypted_content) arrive
		// whole: each member replaces the block's, as the SDKs do.
		for k, v := range d {
			if k != "type" {
				bs.set(k, v)
			}
		}
	default:
		// A delta type traceforge does not know (DESIGN §13.3) is not
		// dropped: a string member is appended to the block's string
		// member of the same name (or starts it), any other value
		// replaces the block's.
		for k, v := range d {
			if k == "type" {
				continue
			}
			_, isStr := v.(string)
			prev := bs.block[k]
			_, prevStr := prev.(string)
			if isStr && (prev == nil || prevStr) {
				if err := appendString(k, k); err != nil {
					return err
				}
				continue
			}
			bs.set(k, v)
		}
	}
	return nil
}

// set replaces the block's member k by v, dropping what deltas had
// accumulated for it.
func (bs *anthropicBlock) set(k string, v any) {
	delete(bs.texts, k)
	bs.block[k] = v
}

// finish parses a tool block's accumulated input JSON.
func (bs *anthropicBlock) finish(at string) error {
	if !bs.jsonMode {
		return nil
	}
	bs.jsonMode = false
	text := strings.TrimSpace(bs.partial.String())
	bs.partial.Reset()
	if text == "" {
		bs.block["input"] = map[string]any{}
		return nil
	}
	v, err := DecodeValue([]byte(text))
	if err != nil {
		return fmt.Errorf("%s: input of block: %w", at, err)
	}
	bs.block["input"] = v
	return nil
}

func (a *anthropicAssembler) Done() (map[string]any, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.streamErr != nil {
		return nil, a.streamErr
	}
	if a.msg == nil {
		return nil, fmt.Errorf("%w: no message_start in %d events", ErrBrokenStream, a.sse.Events())
	}
	if !a.stopped {
		return nil, fmt.Errorf("%w: no message_stop after %d events", ErrBrokenStream, a.sse.Events())
	}
	idx := make([]int64, 0, len(a.blocks))
	for i := range a.blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(x, y int) bool { return idx[x] < idx[y] })
	for _, i := range idx {
		if a.blocks[i].jsonMode {
			return nil, fmt.Errorf("%w: block %d has no content_block_stop", ErrBrokenStream, i)
		}
	}
	body := DeepCopy(a.msg).(map[string]any)
	content := make([]any, 0, len(idx))
	for _, i := range idx {
		content = append(content, a.blocks[i].value())
	}
	body["content"] = content
	return body, nil
}
