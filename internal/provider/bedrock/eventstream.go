package bedrock

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/traceforge/traceforge/internal/provider"
)

// EventStreamContentType is the Content-Type of AWS event streams.
const EventStreamContentType = "application/vnd.amazon.eventstream"

// maxFrame caps one event-stream frame (the protocol's own limit is
// 16 MiB): a longer declared length is malformed, never an allocation.
const maxFrame = 16 << 20

// The event-stream headers Bedrock's frames carry.
const (
	hdrMessageType   = ":message-type"
	hdrEventType     = ":event-type"
	hdrContentType   = ":content-type"
	hdrExceptionType = ":exception-type"
	hdrErrorCode     = ":error-code"
	hdrErrorMessage  = ":error-message"
)

// Frame is one decoded event-stream message: its :message-type, its
// :event-type (or :exception-type, :error-code), and its JSON payload.
type Frame struct {
	MessageType string
	Type        string
	Payload     []byte
	ErrMessage  string // :error-message of an error frame
}

// FrameReader splits event-stream bytes that arrive in arbitrary pieces
// into frames, decoded (prelude and message CRCs checked) by
// aws-sdk-go-v2's eventstream.Decoder.
type FrameReader struct {
	buf    []byte
	dec    *eventstream.Decoder
	frames int
}

// Feed appends p and calls frame for every complete frame, in order. An
// error (a frame that does not decode, a CRC mismatch, a declared length
// beyond 16 MiB) wraps provider.ErrMalformed; nothing is read after it.
func (r *FrameReader) Feed(p []byte, frame func(Frame) error) error {
	return r.FeedMessages(p, func(_ []byte, msg eventstream.Message) error {
		f := Frame{Payload: msg.Payload}
		f.MessageType = headerString(msg.Headers, hdrMessageType)
		switch f.MessageType {
		case "exception":
			f.Type = headerString(msg.Headers, hdrExceptionType)
		case "error":
			f.Type = headerString(msg.Headers, hdrErrorCode)
			f.ErrMessage = headerString(msg.Headers, hdrErrorMessage)
		default:
			f.Type = headerString(msg.Headers, hdrEventType)
		}
		return frame(f)
	})
}

// FeedMessages is Feed handing over each frame's bytes (valid only during
// the call) and its decoded message.
func (r *FrameReader) FeedMessages(p []byte, frame func(raw []byte, msg eventstream.Message) error) error {
	r.buf = append(r.buf, p...)
	if r.dec == nil {
		r.dec = eventstream.NewDecoder()
	}
	for len(r.buf) >= 4 {
		n := binary.BigEndian.Uint32(r.buf)
		if n > maxFrame || n < 16 {
			return fmt.Errorf("%w: event-stream frame %d declares %d bytes", provider.ErrMalformed, r.frames+1, n)
		}
		if uint32(len(r.buf)) < n {
			return nil
		}
		raw := r.buf[:n]
		msg, err := r.dec.Decode(bytes.NewReader(raw), nil)
		if err != nil {
			return fmt.Errorf("%w: event-stream frame %d: %v", provider.ErrMalformed, r.frames+1, err)
		}
		r.frames++
		r.buf = r.buf[n:]
		if err := frame(raw, msg); err != nil {
			return err
		}
	}
	return nil
}

// Frames is the number of frames decoded so far.
func (r *FrameReader) Frames() int { return r.frames }

// Pending is the number of bytes of an incomplete frame held.
func (r *FrameReader) Pending() int { return len(r.buf) }

func headerString(h eventstream.Headers, name string) string {
	v := h.Get(name)
	if v == nil {
		return ""
	}
	if s, ok := v.(eventstream.StringValue); ok {
		return string(s)
	}
	return v.String()
}

// EncodeEvent is one event frame, as Bedrock sends it: :event-type,
// :content-type application/json and :message-type event headers, payload
// the JSON encoding of v; prelude and message CRCs by
// eventstream.Encoder.
func EncodeEvent(eventType string, v any) ([]byte, error) {
	payload, err := provider.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", provider.ErrMalformed, err)
	}
	var h eventstream.Headers
	h.Set(hdrEventType, eventstream.StringValue(eventType))
	h.Set(hdrContentType, eventstream.StringValue("application/json"))
	h.Set(hdrMessageType, eventstream.StringValue("event"))
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: h, Payload: payload}); err != nil {
		return nil, fmt.Errorf("%w: %v", provider.ErrMalformed, err)
	}
	return b.Bytes(), nil
}

// EncodeException is an exception frame (:message-type exception,
// :exception-type typ) with payload {"message": message}.
func EncodeException(typ, message string) ([]byte, error) {
	payload := provider.MarshalOrdered("message", message)
	var h eventstream.Headers
	h.Set(hdrExceptionType, eventstream.StringValue(typ))
	h.Set(hdrContentType, eventstream.StringValue("application/json"))
	h.Set(hdrMessageType, eventstream.StringValue("exception"))
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: h, Payload: payload}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// block is one content block of a ConverseStream answer being assembled.
type block struct {
	kind      string         // "text", "toolUse", "reasoningContent", or a start's member
	start     map[string]any // the start's members (toolUse: toolUseId, name)
	text      []byte         // text, toolUse input JSON, reasoning text
	signature any            // reasoning signature
	redacted  any            // reasoning redactedContent
	extra     map[string]any // reasoning members traceforge does not know
	citations []any          // citation deltas of a text block
	items     []any          // toolResult delta items; deltas of an unknown kind
	merged    map[string]any // image delta members, the last one winning
}

// assembler builds a Converse response from a ConverseStream event stream:
// output.message {role, content: the blocks by contentBlockIndex},
// stopReason and additionalModelResponseFields from messageStop, and every
// member of the metadata event (usage, metrics, trace, …) at the top level,
// as Converse answers. Text deltas are joined; a toolUse block's input is
// the JSON its deltas spell ("" = {}); reasoning deltas become
// reasoningContent.reasoningText {text, signature} (or redactedContent).
// The "p" padding member of every event is dropped. An exception or error
// frame breaks the stream (provider.ErrStreamError); a stream without
// messageStop is broken (provider.ErrBrokenStream); a delta of another
// kind (citation, image, toolResult) is refused (provider.ErrMalformed),
// never guessed.
type assembler struct {
	frameFeed
	role   any
	blocks map[int64]*block
	stop   map[string]any // messageStop's members
	meta   map[string]any // metadata's members
	held   int64
}

// Held is the number of bytes the assembler holds (provider.SizedAssembler).
func (a *assembler) Held() int64 { return a.held + int64(a.fr.Pending()) }

func (a *assembler) Write(p []byte) (int, error) { return a.feed(p, a.frame) }

// frameFeed is what the event-stream assemblers share: the frame reader,
// the framing error that fails every later Write, and the stream error (an
// exception frame) after which the rest is ignored.
type frameFeed struct {
	fr        FrameReader
	err       error
	streamErr error
}

// feed hands the frames completed by p to frame.
func (f *frameFeed) feed(p []byte, frame func(Frame) error) (int, error) {
	if f.err != nil {
		return len(p), f.err
	}
	if f.streamErr != nil {
		return len(p), nil
	}
	if err := f.fr.Feed(p, frame); err != nil {
		f.err = err
		return len(p), err
	}
	return len(p), nil
}

func (a *assembler) frame(f Frame) error {
	if a.streamErr != nil {
		return nil
	}
	n := a.fr.Frames()
	switch f.MessageType {
	case "exception", "error":
		msg := f.ErrMessage
		if v, err := provider.DecodeValue(f.Payload); err == nil {
			if m, ok := v.(map[string]any); ok {
				if s, ok := m["message"].(string); ok {
					msg = s
				}
			}
		}
		a.streamErr = fmt.Errorf("%w: %w: frame %d: %s %s: %s", provider.ErrBrokenStream, provider.ErrStreamError, n, f.MessageType, f.Type, msg)
		return nil
	case "event":
	default:
		return fmt.Errorf("%w: frame %d: :message-type %q", provider.ErrMalformed, n, f.MessageType)
	}
	a.held += int64(len(f.Payload))
	v, err := provider.DecodeEvent(f.Payload)
	if err != nil {
		return fmt.Errorf("frame %d (%s): %w", n, f.Type, err)
	}
	ev, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: frame %d (%s): payload is %s, not an object", provider.ErrMalformed, n, f.Type, provider.TypeName(v))
	}
	delete(ev, "p")
	switch f.Type {
	case "messageStart":
		a.role = ev["role"]
	case "contentBlockStart":
		b, err := a.block(n, ev)
		if err != nil {
			return err
		}
		start, ok := ev["start"].(map[string]any)
		if !ok || len(start) != 1 {
			return fmt.Errorf("%w: frame %d: contentBlockStart/start is not an object with one member", provider.ErrMalformed, n)
		}
		for k, v := range start {
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: frame %d: contentBlockStart/start/%s is %s, not an object", provider.ErrMalformed, n, k, provider.TypeName(v))
			}
			if b.kind != "" && b.kind != k {
				return fmt.Errorf("%w: frame %d: block %s started after %s deltas", provider.ErrInconsistent, n, k, b.kind)
			}
			b.kind, b.start = k, m
		}
	case "contentBlockDelta":
		b, err := a.block(n, ev)
		if err != nil {
			return err
		}
		delta, ok := ev["delta"].(map[string]any)
		if !ok || len(delta) != 1 {
			return fmt.Errorf("%w: frame %d: contentBlockDelta/delta is not an object with one member", provider.ErrMalformed, n)
		}
		return a.delta(n, b, delta)
	case "contentBlockStop":
		if _, err := a.block(n, ev); err != nil {
			return err
		}
	case "messageStop":
		a.stop = ev
	case "metadata":
		a.meta = ev
	default:
		// An event type traceforge does not know has no place in the
		// Converse answer; it is kept, in order, in the stream's events
		// (response.wire) and replayed (DESIGN §13.3).
	}
	return nil
}

// block returns the block of an event's contentBlockIndex.
func (a *assembler) block(n int, ev map[string]any) (*block, error) {
	i, ok := provider.AsInt(ev["contentBlockIndex"])
	if !ok || i < 0 || i > 1<<16 {
		return nil, fmt.Errorf("%w: frame %d: contentBlockIndex is %s, not an integer in [0, 65536]", provider.ErrMalformed, n, provider.TypeName(ev["contentBlockIndex"]))
	}
	if a.blocks == nil {
		a.blocks = map[int64]*block{}
	}
	b := a.blocks[i]
	if b == nil {
		b = &block{}
		a.blocks[i] = b
	}
	return b, nil
}

func (a *assembler) delta(n int, b *block, delta map[string]any) error {
	for k, v := range delta {
		kind := k
		if kind == "citation" {
			// Citations arrive beside a text block's text deltas.
			b.citations = append(b.citations, provider.DeepCopy(v))
			if b.kind == "" {
				b.kind = "text"
			}
			continue
		}
		if b.kind != "" && b.kind != kind {
			return fmt.Errorf("%w: frame %d: a %s delta in a %s block", provider.ErrInconsistent, n, kind, b.kind)
		}
		b.kind = kind
		switch kind {
		case "text":
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%w: frame %d: delta/text is %s, not a string", provider.ErrMalformed, n, provider.TypeName(v))
			}
			b.text = append(b.text, s...)
			a.held += int64(len(s))
		case "toolUse":
			m, ok := v.(map[string]any)
			s, sok := m["input"].(string)
			if !ok || !sok {
				return fmt.Errorf("%w: frame %d: delta/toolUse/input is not a string", provider.ErrMalformed, n)
			}
			b.text = append(b.text, s...)
			a.held += int64(len(s))
		case "reasoningContent":
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: frame %d: delta/reasoningContent is %s, not an object", provider.ErrMalformed, n, provider.TypeName(v))
			}
			for rk, rv := range m {
				switch rk {
				case "text":
					s, ok := rv.(string)
					if !ok {
						return fmt.Errorf("%w: frame %d: delta/reasoningContent/text is %s, not a string", provider.ErrMalformed, n, provider.TypeName(rv))
					}
					b.text = append(b.text, s...)
				case "signature":
					b.signature = rv
				case "redactedContent":
					b.redacted = rv
				default:
					if b.extra == nil {
						b.extra = map[string]any{}
					}
					b.extra[rk] = provider.DeepCopy(rv)
				}
			}
		case "toolResult":
			// A list of result items ({text} or {json}), appended in order.
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			for _, it := range list {
				b.items = append(b.items, provider.DeepCopy(it))
			}
		case "image":
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: frame %d: delta/image is %s, not an object", provider.ErrMalformed, n, provider.TypeName(v))
			}
			if b.merged == nil {
				b.merged = map[string]any{}
			}
			for mk, mv := range m {
				b.merged[mk] = provider.DeepCopy(mv)
			}
		default:
			// A delta kind traceforge does not know (DESIGN §13.3): kept
			// in order, nothing dropped.
			b.items = append(b.items, provider.DeepCopy(v))
		}
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
	if a.fr.Pending() > 0 {
		return nil, fmt.Errorf("%w: %d bytes of an incomplete frame after %d frames", provider.ErrBrokenStream, a.fr.Pending(), a.fr.Frames())
	}
	if a.stop == nil {
		return nil, fmt.Errorf("%w: no messageStop event in %d frames", provider.ErrBrokenStream, a.fr.Frames())
	}
	idx := make([]int64, 0, len(a.blocks))
	for i := range a.blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	content := make([]any, 0, len(idx))
	for _, i := range idx {
		c, err := a.blocks[i].value()
		if err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
		content = append(content, c)
	}
	role := a.role
	if role == nil {
		role = "assistant"
	}
	body := map[string]any{"output": map[string]any{"message": map[string]any{"role": role, "content": content}}}
	for k, v := range a.meta {
		body[k] = provider.DeepCopy(v)
	}
	for k, v := range a.stop {
		body[k] = provider.DeepCopy(v)
	}
	return body, nil
}

// value is the Converse content block b assembles to: text (with citation
// deltas: Converse's citationsContent {content: [{text}], citations}),
// toolUse, reasoningContent, toolResult {start members…, content: items},
// image {start and delta members}; a block of a kind traceforge does not
// know is {kind: [its deltas in order]} (docs/providers.md).
func (b *block) value() (map[string]any, error) {
	withStart := func(extra map[string]any) map[string]any {
		m := make(map[string]any, len(b.start)+len(extra))
		for k, v := range b.start {
			m[k] = provider.DeepCopy(v)
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	switch b.kind {
	case "", "text":
		if len(b.citations) > 0 {
			return map[string]any{"citationsContent": map[string]any{
				"content":   []any{map[string]any{"text": string(b.text)}},
				"citations": b.citations,
			}}, nil
		}
		return map[string]any{"text": string(b.text)}, nil
	case "toolResult":
		return map[string]any{"toolResult": withStart(map[string]any{"content": b.items})}, nil
	case "image":
		return map[string]any{"image": withStart(b.merged)}, nil
	case "toolUse":
		tu := make(map[string]any, len(b.start)+1)
		for k, v := range b.start {
			tu[k] = provider.DeepCopy(v)
		}
		input := any(map[string]any{})
		if len(bytes.TrimSpace(b.text)) > 0 {
			v, err := provider.DecodeValue(b.text)
			if err != nil {
				return nil, fmt.Errorf("toolUse input: %w", err)
			}
			input = v
		}
		tu["input"] = input
		return map[string]any{"toolUse": tu}, nil
	case "reasoningContent":
		if b.redacted != nil {
			return map[string]any{"reasoningContent": map[string]any{"redactedContent": b.redacted}}, nil
		}
		rt := map[string]any{"text": string(b.text)}
		if b.signature != nil {
			rt["signature"] = b.signature
		}
		for k, v := range b.extra {
			rt[k] = v
		}
		return map[string]any{"reasoningContent": map[string]any{"reasoningText": rt}}, nil
	}
	if b.items == nil {
		return map[string]any{b.kind: withStart(nil)}, nil // started, no delta
	}
	return map[string]any{b.kind: b.items}, nil
}

// synthesize writes the ConverseStream events of a Converse response (see
// Converse.SynthesizeStream).
func synthesize(body map[string]any, e *provider.Emitter) error {
	blocks, err := messageContent(body)
	if err != nil {
		return err
	}
	if _, ok := body["stopReason"].(string); !ok {
		return fmt.Errorf("%w: /stopReason is %s, not a string", provider.ErrMalformed, provider.TypeName(body["stopReason"]))
	}
	role := any("assistant")
	if msg, ok := body["output"].(map[string]any)["message"].(map[string]any); ok && msg["role"] != nil {
		role = msg["role"]
	}
	emit := func(typ string, v any) error {
		if e.Dry() {
			_, err := provider.Marshal(v)
			return err
		}
		f, err := EncodeEvent(typ, v)
		if err != nil {
			return err
		}
		return e.Raw(f)
	}
	if err := emit("messageStart", provider.Ordered("role", role)); err != nil {
		return err
	}
	for i, b := range blocks {
		idx := provider.Num(int64(i))
		delta := func(d any) error {
			return emit("contentBlockDelta", provider.Ordered("contentBlockIndex", idx, "delta", d))
		}
		m, ok := b.(map[string]any)
		if !ok || len(m) != 1 {
			return fmt.Errorf("%w: /output/message/content/%d is not an object with one member", provider.ErrMalformed, i)
		}
		switch {
		case m["text"] != nil:
			s, ok := m["text"].(string)
			if !ok {
				return fmt.Errorf("%w: /output/message/content/%d/text is not a string", provider.ErrMalformed, i)
			}
			for _, piece := range provider.Pieces(s, provider.TextPiece) {
				if err := delta(map[string]any{"text": piece}); err != nil {
					return err
				}
			}
		case m["toolUse"] != nil:
			tu, ok := m["toolUse"].(map[string]any)
			if !ok {
				return fmt.Errorf("%w: /output/message/content/%d/toolUse is not an object", provider.ErrMalformed, i)
			}
			start := make(map[string]any, len(tu))
			for k, v := range tu {
				if k != "input" {
					start[k] = v
				}
			}
			if err := emit("contentBlockStart", provider.Ordered("start", map[string]any{"toolUse": provider.OrderedFirst(start, "toolUseId", "name")}, "contentBlockIndex", idx)); err != nil {
				return err
			}
			input, err := provider.Marshal(tu["input"])
			if err != nil {
				return fmt.Errorf("%w: %v", provider.ErrMalformed, err)
			}
			if err := delta(map[string]any{"toolUse": map[string]any{"input": string(input)}}); err != nil {
				return err
			}
		case m["reasoningContent"] != nil:
			rc, ok := m["reasoningContent"].(map[string]any)
			if !ok {
				return fmt.Errorf("%w: /output/message/content/%d/reasoningContent is not an object", provider.ErrMalformed, i)
			}
			if red, ok := rc["redactedContent"]; ok {
				if err := delta(map[string]any{"reasoningContent": map[string]any{"redactedContent": red}}); err != nil {
					return err
				}
				break
			}
			rt, ok := rc["reasoningText"].(map[string]any)
			text, tok := rt["text"].(string)
			if !ok || !tok {
				return fmt.Errorf("%w: /output/message/content/%d/reasoningContent has no reasoningText.text", provider.ErrMalformed, i)
			}
			for _, piece := range provider.Pieces(text, provider.TextPiece) {
				if err := delta(map[string]any{"reasoningContent": map[string]any{"text": piece}}); err != nil {
					return err
				}
			}
			if sig, ok := rt["signature"]; ok {
				if err := delta(map[string]any{"reasoningContent": map[string]any{"signature": sig}}); err != nil {
					return err
				}
			}
			for _, k := range slices.Sorted(maps.Keys(rt)) {
				if k != "text" && k != "signature" { // members traceforge does not know, as they came
					if err := delta(map[string]any{"reasoningContent": map[string]any{k: rt[k]}}); err != nil {
						return err
					}
				}
			}
		default:
			return fmt.Errorf("%w: /output/message/content/%d is a block ConverseStream cannot carry in traceforge's replay", provider.ErrMalformed, i)
		}
		if err := emit("contentBlockStop", provider.Ordered("contentBlockIndex", idx)); err != nil {
			return err
		}
	}
	stop := map[string]any{"stopReason": body["stopReason"]}
	if v, ok := body["additionalModelResponseFields"]; ok {
		stop["additionalModelResponseFields"] = v
	}
	if err := emit("messageStop", provider.OrderedFirst(stop, "stopReason")); err != nil {
		return err
	}
	meta := map[string]any{}
	for k, v := range body {
		switch k {
		case "output", "stopReason", "additionalModelResponseFields":
			continue
		}
		meta[k] = v
	}
	if len(meta) > 0 {
		return emit("metadata", provider.OrderedFirst(meta, "usage", "metrics"))
	}
	return nil
}
