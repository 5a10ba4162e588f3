package provider

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Assembler consumes a provider SSE stream incrementally, over arbitrary chunk
// boundaries, and builds the final message in the provider's non-streamed
// shape, so that Extract(Done()) gives the same Fields as the same call made
// without streaming.
//
// Write never blocks and keeps nothing but the message under construction
// (plus at most one incomplete event). It returns an error (wrapping
// ErrMalformed, with the event number) only when the stream itself is not
// the provider's shape, e.g. an event whose data is not JSON; after that the
// assembler ignores further input and Done returns the same error. An error
// event is not a Write error: Done reports it (ErrStreamError and
// ErrBrokenStream).
type Assembler interface {
	Write(p []byte) (int, error)
	Done() (map[string]any, error)
}

// SizedAssembler is the optional capability of an assembler that can tell
// about how many bytes of message it holds (text, arguments, other
// accumulated members). The recording proxy then applies the snapshot size
// cap to the message rather than to the stream's bytes, whose framing can be
// thirty times larger (DESIGN §12.10.6); an assembler without it is capped
// by the bytes it was fed.
type SizedAssembler interface {
	Held() int64
}

// NewAssembler returns the assembler of one OpenAI stream.
//
// Chat completions: chunks are merged by choice index into
// {"id","object":"chat.completion","created","model","system_fingerprint",
// "choices":[{"index","message","logprobs","finish_reason"}],"usage"}. Other
// top-level members (service_tier, …) are kept (last non-empty value wins),
// "obfuscation" is dropped. The message gets "role" (default "assistant"),
// "content" (the concatenated deltas; null when there were none but the
// message has tool calls, a refusal or a function call; "" otherwise; an
// array of parts when a delta sent one, as Mistral does — the parts in
// order, string deltas and adjacent text parts merged into one text part),
// "refusal" when any delta carried that key, every other delta member
// (reasoning_content, vendor members: strings concatenated in order, other
// values the last one, null when only null was sent; DESIGN §12.10.2),
// "tool_calls" merged by tool
// index ({"id","type","function":{"name","arguments"}} with arguments
// concatenated; custom tools' "custom.input" likewise; "type" defaults to the
// kind of object sent), and the legacy "function_call" likewise. Tool-call
// deltas that contradict each other — an index whose id or name changes, a
// gap in the indexes, arguments for an index no delta opened with an id or
// a name — are an error wrapping ErrInconsistent (DESIGN §12.10.3). Logprobs
// arrays are concatenated. Usage comes from the chunk that carries a non-null
// "usage" (the usage-only chunk of stream_options.include_usage).
//
// Legacy completions: "text" is concatenated by choice index, "object" is
// "text_completion", the rest as above.
//
// An OpenAI stream is complete when every choice seen (at least one) has a
// finish_reason and either `data: [DONE]` arrived or, if chunks carried a
// "usage" member (include_usage), the usage chunk arrived. A stream without
// a finish_reason is broken even after [DONE]; events after [DONE] are
// ignored. A `data: {"error":…}` event (or an "event: error") makes the
// stream broken with ErrStreamError.

func (o OpenAIWire) NewAssembler() Assembler {
	return &openaiAssembler{completions: o.endpoint == Completions, choices: map[int64]*choiceState{}, meta: map[string]any{}}
}

type openaiAssembler struct {
	sse         SSEParser
	completions bool
	err         error // sticky malformed-stream error
	streamErr   error // error event
	sawDone     bool
	usageKey    bool // some chunk carried a "usage" member
	usage       map[string]any
	meta        map[string]any
	choices     map[int64]*choiceState
	lpBytes     int64 // data of events whose choices carried logprobs
	eventSize   int   // data size of the event being applied
}

type choiceState struct {
	role        string
	content     strings.Builder
	parts       *contentParts // content that arrived as arrays of parts
	refusalKey  bool
	refusal     strings.Builder
	refusalSeen bool
	tools       map[int64]*toolState
	lastTool    int64
	fn          *toolState
	finish      string
	logprobs    map[string]any
	extra       map[string]any
	members     map[string]*member // delta members not in chatDeltaMembers
}

// member is an unknown delta member (reasoning_content, vendor fields):
// strings are concatenated in order, other values keep the last one, and a
// member only ever sent as null is kept as null (DESIGN §12.10.2).
type member struct {
	text  strings.Builder
	isStr bool
	last  any
}

func (m *member) add(v any) {
	switch t := v.(type) {
	case nil:
	case string:
		if !m.isStr {
			m.isStr, m.last = true, nil
		}
		m.text.WriteString(t)
	default:
		m.isStr, m.last = false, t
		m.text.Reset()
	}
}

func (m *member) value() any {
	if m.isStr {
		return m.text.String()
	}
	return DeepCopy(m.last)
}

type toolState struct {
	id, typ, kind, name string
	args                strings.Builder
}

func (a *openaiAssembler) Write(p []byte) (int, error) {
	if a.err != nil {
		return len(p), a.err
	}
	if a.streamErr != nil || a.sawDone {
		return len(p), nil
	}
	if err := a.sse.Feed(p, a.event); err != nil {
		a.err = err
		return len(p), err
	}
	return len(p), nil
}

func (a *openaiAssembler) event(ev SSEEvent) error {
	if a.sawDone || a.streamErr != nil {
		return nil
	}
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		a.sawDone = true
		return nil
	}
	a.eventSize = len(data)
	v, err := DecodeEvent(data)
	if ev.Name == "error" {
		a.streamErr = StreamError(ev.Num, v)
		return nil
	}
	if err != nil {
		return fmt.Errorf("event %d: %w", ev.Num, err)
	}
	chunk, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: event %d: data is %s, not an object", ErrMalformed, ev.Num, TypeName(v))
	}
	if e, ok := chunk["error"]; ok && e != nil {
		a.streamErr = StreamError(ev.Num, chunk)
		return nil
	}
	for k, val := range chunk {
		switch k {
		case "choices", "object", "obfuscation":
		case "usage":
			a.usageKey = true
			if val == nil {
				continue
			}
			u, ok := val.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: event %d: /usage is %s, not an object", ErrMalformed, ev.Num, TypeName(val))
			}
			a.usage = u
		default:
			if val == nil || val == "" {
				continue
			}
			a.meta[k] = val
		}
	}
	choices, ok := chunk["choices"].([]any)
	if !ok {
		if chunk["choices"] == nil {
			return nil
		}
		return fmt.Errorf("%w: event %d: /choices is %s, not an array", ErrMalformed, ev.Num, TypeName(chunk["choices"]))
	}
	for i, c := range choices {
		cm, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: event %d: /choices/%d is %s, not an object", ErrMalformed, ev.Num, i, TypeName(c))
		}
		if err := a.choice(ev.Num, i, cm); err != nil {
			return err
		}
	}
	return nil
}

// StreamError is the error of a stream that carried an error event (number
// event, data v): it wraps ErrBrokenStream and ErrStreamError and quotes the
// provider's message.
func StreamError(event int, v any) error {
	msg := ""
	if m, ok := v.(map[string]any); ok {
		if e, ok := m["error"].(map[string]any); ok {
			msg, _ = e["message"].(string)
			if msg == "" {
				msg, _ = e["type"].(string)
			}
		}
	}
	if msg == "" {
		msg = "no message"
	}
	return fmt.Errorf("%w: %w: event %d: %s", ErrBrokenStream, ErrStreamError, event, msg)
}

func (a *openaiAssembler) choice(event, pos int, c map[string]any) error {
	ptr := fmt.Sprintf("event %d: /choices/%d", event, pos)
	idx := int64(0)
	if v, ok := c["index"]; ok && v != nil {
		n, ok := AsInt(v)
		if !ok || n < 0 || n > 1<<16 {
			return fmt.Errorf("%w: %s/index is not a small integer", ErrMalformed, ptr)
		}
		idx = n
	}
	st := a.choices[idx]
	if st == nil {
		st = &choiceState{tools: map[int64]*toolState{}, lastTool: -1}
		a.choices[idx] = st
	}
	for k, v := range c {
		switch k {
		case "index", "delta":
		case "finish_reason":
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%w: %s/finish_reason is %s, not a string", ErrMalformed, ptr, TypeName(v))
			}
			st.finish = s
		case "text":
			if !a.completions {
				continue
			}
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%w: %s/text is %s, not a string", ErrMalformed, ptr, TypeName(v))
			}
			st.content.WriteString(s)
		case "logprobs":
			if v != nil {
				a.lpBytes += int64(a.eventSize)
			}
			mergeLogprobs(st, v)
		default:
			if v == nil {
				continue
			}
			if st.extra == nil {
				st.extra = map[string]any{}
			}
			st.extra[k] = v
		}
	}
	if a.completions {
		return nil
	}
	d, present := c["delta"]
	if !present || d == nil {
		return nil
	}
	delta, ok := d.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: %s/delta is %s, not an object", ErrMalformed, ptr, TypeName(d))
	}
	ptr += "/delta"
	if r, ok := delta["role"].(string); ok && r != "" {
		st.role = r
	}
	for k, v := range delta {
		if chatDeltaMembers[k] {
			continue
		}
		if st.members == nil {
			st.members = map[string]*member{}
		}
		m := st.members[k]
		if m == nil {
			m = &member{}
			st.members[k] = m
		}
		m.add(v)
	}
	switch t := delta["content"].(type) {
	case string:
		if st.parts != nil {
			st.parts.addText(t)
		} else {
			st.content.WriteString(t)
		}
	case []any:
		// Content as an array of parts (Mistral, DESIGN §13.3): the text
		// so far becomes the first part.
		if st.parts == nil {
			st.parts = &contentParts{}
			st.parts.addText(st.content.String())
			st.content.Reset()
		}
		st.parts.add(t)
	case nil:
	default:
		return fmt.Errorf("%w: %s/content is %s, not a string or an array of parts", ErrMalformed, ptr, TypeName(t))
	}
	if r, present := delta["refusal"]; present {
		st.refusalKey = true
		switch t := r.(type) {
		case string:
			st.refusal.WriteString(t)
			st.refusalSeen = true
		case nil:
		default:
			return fmt.Errorf("%w: %s/refusal is %s, not a string", ErrMalformed, ptr, TypeName(t))
		}
	}
	if fc, ok := delta["function_call"].(map[string]any); ok {
		if st.fn == nil {
			st.fn = &toolState{kind: "function"}
		}
		if n, _ := fc["name"].(string); n != "" && st.fn.name == "" {
			st.fn.name = n
		}
		if s, _ := fc["arguments"].(string); s != "" {
			st.fn.args.WriteString(s)
		}
	}
	switch tc := delta["tool_calls"].(type) {
	case nil:
	case []any:
		for j, t := range tc {
			tm, ok := t.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: %s/tool_calls/%d is %s, not an object", ErrMalformed, ptr, j, TypeName(t))
			}
			if err := st.tool(fmt.Sprintf("%s/tool_calls/%d", ptr, j), tm); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: %s/tool_calls is %s, not an array", ErrMalformed, ptr, TypeName(tc))
	}
	return nil
}

func (st *choiceState) tool(ptr string, t map[string]any) error {
	id, _ := t["id"].(string)
	var ti int64
	if v, ok := t["index"]; ok && v != nil {
		n, ok := AsInt(v)
		if !ok || n < 0 || n > 1<<16 {
			return fmt.Errorf("%w: %s/index is not a small integer", ErrMalformed, ptr)
		}
		ti = n
	} else {
		// No index (some OpenAI-compatible servers): a new id starts a new
		// call, anything else continues the last one.
		ti = st.lastTool
		if ti < 0 || (id != "" && st.tools[ti] != nil && st.tools[ti].id != "" && st.tools[ti].id != id) {
			ti = int64(len(st.tools))
		}
	}
	st.lastTool = ti
	name := ""
	for _, kind := range []string{"function", "custom"} {
		if fm, ok := t[kind].(map[string]any); ok {
			if n, _ := fm["name"].(string); n != "" {
				name = n
			}
		}
	}
	ts := st.tools[ti]
	if ts == nil {
		// The first delta of an index opens the call: it names it.
		if id == "" && name == "" {
			return inconsistent("%s: tool call %d gets arguments but no delta opened it (no id, no name)", ptr, ti)
		}
		ts = &toolState{}
		st.tools[ti] = ts
	}
	if id != "" && ts.id != "" && ts.id != id {
		return inconsistent("%s: tool call %d changes its id from %q to %q", ptr, ti, ts.id, id)
	}
	if name != "" && ts.name != "" && ts.name != name {
		return inconsistent("%s: tool call %d changes its name from %q to %q", ptr, ti, ts.name, name)
	}
	if id != "" && ts.id == "" {
		ts.id = id
	}
	if typ, _ := t["type"].(string); typ != "" && ts.typ == "" {
		ts.typ = typ
	}
	for _, kind := range []string{"function", "custom"} {
		fm, ok := t[kind].(map[string]any)
		if !ok {
			continue
		}
		ts.kind = kind
		if n, _ := fm["name"].(string); n != "" && ts.name == "" {
			ts.name = n
		}
		field := "arguments"
		if kind == "custom" {
			field = "input"
		}
		switch s := fm[field].(type) {
		case string:
			ts.args.WriteString(s)
		case nil:
		default:
			return fmt.Errorf("%w: %s/%s/%s is %s, not a string", ErrMalformed, ptr, kind, field, TypeName(s))
		}
	}
	return nil
}

// inconsistent is an ErrInconsistent (and ErrMalformed) error.
func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %w: "+format, append([]any{ErrMalformed, ErrInconsistent}, args...)...)
}

// mergeLogprobs concatenates the array members of streamed logprobs objects
// (chat: content, refusal; completions: tokens, token_logprobs, …).
func mergeLogprobs(st *choiceState, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if st.logprobs == nil {
		st.logprobs = map[string]any{}
	}
	for k, e := range m {
		arr, isArr := e.([]any)
		if prev, ok := st.logprobs[k].([]any); ok && isArr {
			st.logprobs[k] = append(prev, arr...)
			continue
		}
		if e != nil || st.logprobs[k] == nil {
			st.logprobs[k] = e
		}
	}
}

// Held is the size of the text, arguments and members accumulated so far,
// plus the data of the events that carried logprobs.
func (a *openaiAssembler) Held() int64 {
	n := a.lpBytes
	for _, st := range a.choices {
		n += int64(st.content.Len() + st.refusal.Len())
		if st.parts != nil {
			n += int64(st.parts.size())
		}
		for _, m := range st.members {
			n += int64(m.text.Len())
		}
		for _, ts := range st.tools {
			n += int64(ts.args.Len())
		}
		if st.fn != nil {
			n += int64(st.fn.args.Len())
		}
	}
	return n
}

func (a *openaiAssembler) Done() (map[string]any, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.streamErr != nil {
		return nil, a.streamErr
	}
	if len(a.choices) == 0 {
		return nil, fmt.Errorf("%w: no choices in %d events", ErrBrokenStream, a.sse.count)
	}
	idx := make([]int64, 0, len(a.choices))
	for i := range a.choices {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	for _, i := range idx {
		if a.choices[i].finish == "" {
			return nil, fmt.Errorf("%w: choice %d has no finish_reason", ErrBrokenStream, i)
		}
		if err := a.choices[i].toolGap(i); err != nil {
			return nil, err
		}
	}
	if !a.sawDone && a.usageKey && a.usage == nil {
		return nil, fmt.Errorf("%w: stream ended before its usage chunk and [DONE]", ErrBrokenStream)
	}

	body := make(map[string]any, len(a.meta)+3)
	for k, v := range a.meta {
		body[k] = DeepCopy(v)
	}
	if a.completions {
		body["object"] = "text_completion"
	} else {
		body["object"] = "chat.completion"
	}
	choices := make([]any, 0, len(idx))
	for _, i := range idx {
		choices = append(choices, a.buildChoice(i, a.choices[i]))
	}
	body["choices"] = choices
	if a.usage != nil {
		body["usage"] = DeepCopy(a.usage)
	}
	return body, nil
}

// toolGap reports a gap in the tool-call indexes of choice i (0 then 2):
// the SDKs fail on such a stream live, so it must not replay.
func (st *choiceState) toolGap(i int64) error {
	for k := range st.tools {
		if k >= int64(len(st.tools)) {
			return inconsistent("choice %d: tool call indexes have a gap (%d calls, index %d)", i, len(st.tools), k)
		}
	}
	return nil
}

func (a *openaiAssembler) buildChoice(i int64, st *choiceState) map[string]any {
	c := make(map[string]any, len(st.extra)+4)
	for k, v := range st.extra {
		c[k] = DeepCopy(v)
	}
	c["index"] = Num(i)
	c["finish_reason"] = st.finish
	if st.logprobs != nil {
		c["logprobs"] = DeepCopy(st.logprobs)
	} else {
		c["logprobs"] = nil
	}
	if a.completions {
		c["text"] = st.content.String()
		return c
	}
	msg := make(map[string]any, len(st.members)+4)
	for k, m := range st.members {
		msg[k] = m.value()
	}
	role := st.role
	if role == "" {
		role = "assistant"
	}
	msg["role"] = role
	if st.parts != nil {
		msg["content"] = DeepCopy(st.parts.parts)
	} else if st.content.Len() > 0 {
		msg["content"] = st.content.String()
	} else if len(st.tools) > 0 || st.fn != nil || st.refusalSeen {
		msg["content"] = nil
	} else {
		msg["content"] = ""
	}
	if st.refusalKey {
		if st.refusalSeen {
			msg["refusal"] = st.refusal.String()
		} else {
			msg["refusal"] = nil
		}
	}
	if len(st.tools) > 0 {
		ti := make([]int64, 0, len(st.tools))
		for k := range st.tools {
			ti = append(ti, k)
		}
		sort.Slice(ti, func(x, y int) bool { return ti[x] < ti[y] })
		calls := make([]any, 0, len(ti))
		for _, k := range ti {
			calls = append(calls, st.tools[k].object())
		}
		msg["tool_calls"] = calls
	}
	if st.fn != nil {
		msg["function_call"] = map[string]any{"name": st.fn.name, "arguments": st.fn.args.String()}
	}
	c["message"] = msg
	return c
}

func (ts *toolState) object() map[string]any {
	kind := ts.kind
	if kind == "" {
		kind = "function"
	}
	typ := ts.typ
	if typ == "" {
		typ = kind
	}
	field := "arguments"
	if kind == "custom" {
		field = "input"
	}
	return map[string]any{
		"id":   ts.id,
		"type": typ,
		kind:   map[string]any{"name": ts.name, field: ts.args.String()},
	}
}
