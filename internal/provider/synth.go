package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"sort"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Piece sizes of synthesized streams, in runes.
const (
	TextPiece = 16
	ArgsPiece = 24
)

// SynthesizeStream writes an OpenAI SSE stream that carries body (a
// final response in the provider's non-streamed shape): what the replay
// server sends when a request has "stream": true. The stream is deterministic
// (same body, same bytes), every event ends with a blank line, and flush is
// called after each event. It is written lazily, in time linear in the size
// of body (DESIGN §12.10.1): each event goes out as soon as it is built. A
// body whose shape cannot be streamed is found by a first pass that writes
// nothing, so it returns an error (wrapping ErrMalformed) with nothing
// written.
//
// OpenAI chat, per choice: a chunk with delta.role (and "content": "" or null,
// "refusal": null when the message has that key, and the choice's logprobs),
// then every other string member of the message (reasoning_content, vendor
// members; sorted by name) in pieces of about 16 runes cut after whitespace
// where possible (one delta with "" for an empty string), content deltas
// likewise, refusal deltas likewise, then per tool call a delta with index,
// id, type, function.name and empty arguments followed by argument pieces,
// then one delta per remaining non-string member of the message (sorted by
// name, its value whole), then a chunk with an empty delta and the
// finish_reason: every member of the stored message reaches the client
// (DESIGN §12.10.2). With includeUsage every chunk carries "usage": null and
// a usage-only chunk ("choices": []) follows. Last comes `data: [DONE]`.
// Every chunk repeats id, created, model, service_tier and system_fingerprint
// (the latter two when the body has them). Legacy completions: text chunks,
// then a chunk with "text": "" and the finish_reason, usage as above.
func (o OpenAIWire) SynthesizeStream(body map[string]any, includeUsage bool, w io.Writer, flush func()) error {
	return WriteLazily(w, flush, func(e *Emitter) error {
		return openaiStream(o.endpoint == Completions, body, includeUsage, e)
	})
}

// WriteEvents writes each event with one Write, calling flush (when not nil)
// after each.
func WriteEvents(events [][]byte, w io.Writer, flush func()) error {
	for _, ev := range events {
		if _, err := w.Write(ev); err != nil {
			return err
		}
		if flush != nil {
			flush()
		}
	}
	return nil
}

// Emitter writes the events of a synthesized stream as they are produced,
// one Write (and flush) per event; in the dry run of WriteLazily it writes
// nothing, so that a generator only checks its body.
type Emitter struct {
	w     io.Writer
	flush func()
	dry   bool
}

// WriteLazily runs gen twice: a dry run that only checks the body (an error
// there is returned with nothing written), then the real run, in which every
// event is written as soon as gen builds it. The stream is never held in
// memory whole, so its first byte goes out before its last event is built.
func WriteLazily(w io.Writer, flush func(), gen func(e *Emitter) error) error {
	if err := gen(&Emitter{dry: true}); err != nil {
		return err
	}
	return gen(&Emitter{w: w, flush: flush})
}

// Dry reports whether this is the checking pass (nothing is written).
func (e *Emitter) Dry() bool { return e.dry }

// Raw writes one complete event as it is.
func (e *Emitter) Raw(ev []byte) error {
	if e.dry {
		return nil
	}
	if _, err := e.w.Write(ev); err != nil {
		return err
	}
	if e.flush != nil {
		e.flush()
	}
	return nil
}

// Data writes one SSE event with v as its data (DataEvent).
func (e *Emitter) Data(v any) error {
	if e.dry {
		return nil
	}
	ev, err := DataEvent(v)
	if err != nil {
		return err
	}
	return e.Raw(ev)
}

// Named writes one SSE event with an `event:` line (NamedEvent).
func (e *Emitter) Named(name string, v any) error {
	if e.dry {
		return nil
	}
	ev, err := NamedEvent(name, v)
	if err != nil {
		return err
	}
	return e.Raw(ev)
}

// hole marks where a piece goes in an event template; holeJSON is how it
// is encoded.
const (
	hole     = "\x00traceforge-piece\x00"
	holeJSON = `"\u0000traceforge-piece\u0000"`
)

// DataPieces writes one data event per piece of s (EachPiece(s, n)): the
// event of v(piece). The event around the piece is encoded once, with a
// placeholder where the piece goes, and each piece is then encoded alone
// into that template: a long string costs one small encoding per piece,
// not one whole event (the bytes are those of DataEvent(v(piece))).
func (e *Emitter) DataPieces(s string, n int, v func(piece string) any) error {
	return e.pieces("", s, n, v)
}

// NamedPieces is DataPieces for events with an `event:` line.
func (e *Emitter) NamedPieces(name, s string, n int, v func(piece string) any) error {
	return e.pieces(name, s, n, v)
}

func (e *Emitter) pieces(name, s string, n int, v func(piece string) any) error {
	if e.dry || s == "" {
		return nil
	}
	var tmpl []byte
	var err error
	if name == "" {
		tmpl, err = DataEvent(v(hole))
	} else {
		tmpl, err = NamedEvent(name, v(hole))
	}
	if err != nil {
		return err
	}
	// The last occurrence is the placeholder: only the piece's own value
	// follows it, and that holds no strings.
	at := bytes.LastIndex(tmpl, []byte(holeJSON))
	if at < 0 {
		return fmt.Errorf("%w: event template without its piece", ErrMalformed)
	}
	prefix, suffix := tmpl[:at], tmpl[at+len(holeJSON):]
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for piece := range EachPiece(s, n) {
		buf.Reset()
		buf.Write(prefix)
		if err := enc.Encode(piece); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.Write(suffix)
		if err := e.Raw(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// DataEvent is one SSE event with v as its data and no `event:` line.
func DataEvent(v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var out bytes.Buffer
	out.Grow(len(b) + 8)
	out.WriteString("data: ")
	out.Write(b)
	out.WriteString("\n\n")
	return out.Bytes(), nil
}

// NamedEvent is one SSE event with an `event:` line and v as its data.
func NamedEvent(name string, v any) ([]byte, error) {
	b, err := DataEvent(v)
	if err != nil {
		return nil, err
	}
	return append([]byte("event: "+name+"\n"), b...), nil
}

// chatDeltaMembers are the message members the chat stream carries in their
// own way; every other member is streamed generically.
var chatDeltaMembers = map[string]bool{"role": true, "content": true, "refusal": true, "function_call": true, "tool_calls": true}

// otherMembers returns the members of msg not in chatDeltaMembers, sorted,
// split into string ones and the rest.
func otherMembers(msg map[string]any) (strs, others []string) {
	for k, v := range msg {
		if chatDeltaMembers[k] {
			continue
		}
		if _, ok := v.(string); ok {
			strs = append(strs, k)
		} else {
			others = append(others, k)
		}
	}
	sort.Strings(strs)
	sort.Strings(others)
	return strs, others
}

func openaiStream(completions bool, body map[string]any, includeUsage bool, e *Emitter) error {
	if body == nil {
		return fmt.Errorf("%w: no response body", ErrMalformed)
	}
	choices, ok := body["choices"].([]any)
	if !ok {
		return fmt.Errorf("%w: /choices is %s, not an array", ErrMalformed, TypeName(body["choices"]))
	}
	object := "chat.completion.chunk"
	if completions {
		object = "text_completion"
	}
	header := ordered{{"id", body["id"]}, {"object", object}, {"created", body["created"]}, {"model", body["model"]}}
	for _, k := range []string{"service_tier", "system_fingerprint"} {
		if v, ok := body[k]; ok {
			header = append(header, kv{k, v})
		}
	}
	chunkOf := func(choices []any, usage any) ordered {
		c := append(append(make(ordered, 0, len(header)+2), header...), kv{"choices", choices})
		if includeUsage {
			c = append(c, kv{"usage", usage})
		}
		return c
	}
	chunk := func(choices []any, usage any) error { return e.Data(chunkOf(choices, usage)) }
	// The body's other top-level members (a vendor's, such as Groq's
	// x_groq with the usage it sends unasked) ride on the last choice's
	// finish chunk, where such providers send them (DESIGN §13.3).
	extra := bodyExtras(body)
	finishChunk := func(ci int, d ordered) ordered {
		c := chunkOf([]any{d}, nil)
		if ci < len(choices)-1 || len(extra) == 0 {
			return c
		}
		u := c[len(c)-1]
		if includeUsage {
			c = c[:len(c)-1]
		}
		c = append(c, extra...)
		if includeUsage {
			c = append(c, u)
		}
		return c
	}
	for ci, c := range choices {
		cm, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /choices/%d is %s, not an object", ErrMalformed, ci, TypeName(c))
		}
		index := cm["index"]
		if index == nil {
			index = Num(int64(ci))
		}
		finish := cm["finish_reason"]
		if completions {
			text, ok := cm["text"].(string)
			if !ok && cm["text"] != nil {
				return fmt.Errorf("%w: /choices/%d/text is %s, not a string", ErrMalformed, ci, TypeName(cm["text"]))
			}
			lp := cm["logprobs"]
			// The first piece carries the logprobs, the others null.
			first, rest := splitFirstPiece(text, TextPiece)
			if first != "" {
				if err := chunk([]any{ordered{{"text", first}, {"index", index}, {"logprobs", lp}, {"finish_reason", nil}}}, nil); err != nil {
					return err
				}
				lp = nil
			}
			if err := e.DataPieces(rest, TextPiece, func(piece string) any {
				return chunkOf([]any{ordered{{"text", piece}, {"index", index}, {"logprobs", nil}, {"finish_reason", nil}}}, nil)
			}); err != nil {
				return err
			}
			if err := e.Data(finishChunk(ci, append(ordered{{"text", ""}, {"index", index}, {"logprobs", lp}, {"finish_reason", finish}}, choiceExtras(cm, "text")...))); err != nil {
				return err
			}
			continue
		}
		msg, ok := cm["message"].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: /choices/%d/message is %s, not an object", ErrMalformed, ci, TypeName(cm["message"]))
		}
		deltaOf := func(d ordered, lp, fr any) ordered {
			return chunkOf([]any{ordered{{"index", index}, {"delta", d}, {"logprobs", lp}, {"finish_reason", fr}}}, nil)
		}
		delta := func(d ordered, lp, fr any) error { return e.Data(deltaOf(d, lp, fr)) }
		// pieces streams a string: one delta per piece, wrap(piece) being
		// the delta's content.
		pieces := func(s string, n int, wrap func(piece string) ordered) error {
			return e.DataPieces(s, n, func(piece string) any { return deltaOf(wrap(piece), nil, nil) })
		}
		role := msg["role"]
		if role == nil {
			role = "assistant"
		}
		content, _ := msg["content"].(string)
		first := ordered{{"role", role}, {"content", msg["content"]}}
		if msg["content"] == nil && msg["tool_calls"] == nil && msg["function_call"] == nil {
			first[1].v = ""
		}
		if _, ok := msg["refusal"]; ok {
			first = append(first, kv{"refusal", nil})
		}
		first[1].v = emptyIfString(first[1].v)
		if err := delta(first, cm["logprobs"], nil); err != nil {
			return err
		}
		strs, others := otherMembers(msg)
		for _, k := range strs {
			// An empty member still arrives, as one "" delta.
			if v := msg[k].(string); v == "" {
				if err := delta(ordered{{k, ""}}, nil, nil); err != nil {
					return err
				}
			} else if err := pieces(v, TextPiece, func(p string) ordered { return ordered{{k, p}} }); err != nil {
				return err
			}
		}
		if err := pieces(content, TextPiece, func(p string) ordered { return ordered{{"content", p}} }); err != nil {
			return err
		}
		if r, ok := msg["refusal"].(string); ok {
			if err := pieces(r, TextPiece, func(p string) ordered { return ordered{{"refusal", p}} }); err != nil {
				return err
			}
		}
		if fc, ok := msg["function_call"].(map[string]any); ok {
			args, _ := fc["arguments"].(string)
			if err := delta(ordered{{"function_call", ordered{{"name", fc["name"]}, {"arguments", ""}}}}, nil, nil); err != nil {
				return err
			}
			if err := pieces(args, ArgsPiece, func(p string) ordered { return ordered{{"function_call", ordered{{"arguments", p}}}} }); err != nil {
				return err
			}
		}
		if tc, present := msg["tool_calls"]; present && tc != nil {
			calls, ok := tc.([]any)
			if !ok {
				return fmt.Errorf("%w: /choices/%d/message/tool_calls is %s, not an array", ErrMalformed, ci, TypeName(tc))
			}
			for ti, call := range calls {
				cm, ok := call.(map[string]any)
				if !ok {
					return fmt.Errorf("%w: /choices/%d/message/tool_calls/%d is %s, not an object", ErrMalformed, ci, ti, TypeName(call))
				}
				kind, field := "function", "arguments"
				if _, ok := cm["custom"].(map[string]any); ok {
					kind, field = "custom", "input"
				}
				fn, _ := cm[kind].(map[string]any)
				args, _ := fn[field].(string)
				typ := cm["type"]
				if typ == nil {
					typ = kind
				}
				start := ordered{{"index", Num(int64(ti))}, {"id", cm["id"]}, {"type", typ}, {kind, ordered{{"name", fn["name"]}, {field, ""}}}}
				if err := delta(ordered{{"tool_calls", []any{start}}}, nil, nil); err != nil {
					return err
				}
				if err := pieces(args, ArgsPiece, func(p string) ordered {
					return ordered{{"tool_calls", []any{ordered{{"index", Num(int64(ti))}, {kind, ordered{{field, p}}}}}}}
				}); err != nil {
					return err
				}
			}
		}
		for _, k := range others {
			if err := delta(ordered{{k, msg[k]}}, nil, nil); err != nil {
				return err
			}
		}
		if err := e.Data(finishChunk(ci, append(ordered{{"index", index}, {"delta", ordered{}}, {"logprobs", nil}, {"finish_reason", finish}}, choiceExtras(cm, "message")...))); err != nil {
			return err
		}
	}
	if includeUsage {
		if u, ok := body["usage"]; ok && u != nil {
			if err := chunk([]any{}, u); err != nil {
				return err
			}
		}
	}
	return e.Raw([]byte("data: [DONE]\n\n"))
}

// openaiChunkMembers are the top-level members a synthesized chunk carries
// in their own way (obfuscation is the stream's own padding).
var openaiChunkMembers = map[string]bool{"id": true, "object": true, "created": true, "model": true,
	"service_tier": true, "system_fingerprint": true, "choices": true, "usage": true, "obfuscation": true}

// choiceExtras are a choice's members other than index, logprobs,
// finish_reason and its content member (message or text), sorted: vendor
// members such as Together's seed, which providers send on the choice's
// last chunk.
func choiceExtras(choice map[string]any, content string) ordered {
	var keys []string
	for k := range choice {
		switch k {
		case "index", "logprobs", "finish_reason", content:
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make(ordered, 0, len(keys))
	for _, k := range keys {
		out = append(out, kv{k, choice[k]})
	}
	return out
}

// bodyExtras are the body's other top-level members, sorted.
func bodyExtras(body map[string]any) ordered {
	var keys []string
	for k := range body {
		if !openaiChunkMembers[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make(ordered, 0, len(keys))
	for _, k := range keys {
		out = append(out, kv{k, body[k]})
	}
	return out
}

func emptyIfString(v any) any {
	if _, ok := v.(string); ok {
		return ""
	}
	return v
}

// Pieces cuts s into deterministic pieces of at most n runes, after the
// last whitespace of a window where there is one. "" gives no pieces.
func Pieces(s string, n int) []string {
	var out []string
	for p := range EachPiece(s, n) {
		out = append(out, p)
	}
	return out
}

// splitFirstPiece returns the first piece of s and the rest of s.
func splitFirstPiece(s string, n int) (first, rest string) {
	for p := range EachPiece(s, n) {
		return p, s[len(p):]
	}
	return "", ""
}

// EachPiece yields the pieces of Pieces one at a time, in time linear in
// len(s): each step looks at the next n runes only, never at the rest of s.
func EachPiece(s string, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for s != "" {
			cut, count, lastSpace := len(s), 0, -1
			for i, r := range s {
				if count == n {
					cut = i
					break
				}
				count++
				if unicode.IsSpace(r) && count > 1 {
					lastSpace = i + utf8.RuneLen(r)
				}
			}
			if cut < len(s) && lastSpace > 0 {
				cut = lastSpace
			}
			if !yield(s[:cut]) {
				return
			}
			s = s[cut:]
		}
	}
}

// SynthesizeBody builds a full non-streamed response body for a snapshot that
// has no stored body (one migrated from format 0.9.0), from its normalized
// fields. The placeholders, which reports mark as "synthesized":
//
//   - id: "chatcmpl-tf<snapshotID>" (chat), "cmpl-tf<snapshotID>"
//     (completions);
//   - created: created (the snapshot's timestamp) in Unix seconds;
//   - model: f.Model, else requestModel;
//   - usage: f.Usage when present, else {"total_tokens": TokensUsed};
//   - one choice (index 0, logprobs null, role "assistant", refusal null) whose
//     content is f.Content (null when it is "" and there are tool calls) and
//     whose tool_calls are f.ToolCalls.
//
// Fields of the result gives back f.
func (o OpenAIWire) SynthesizeBody(snapshotID string, created time.Time, requestModel string, f snapshot.Fields) map[string]any {
	model := f.Model
	if model == "" {
		model = requestModel
	}
	var usage map[string]any
	if f.Usage != nil {
		usage = DeepCopy(f.Usage).(map[string]any)
	}
	if usage == nil {
		usage = map[string]any{"total_tokens": Num(f.TokensUsed)}
	}
	body := map[string]any{
		"created": Num(created.Unix()),
		"model":   model,
		"usage":   usage,
	}
	if o.endpoint == Completions {
		body["id"] = "cmpl-tf" + snapshotID
		body["object"] = "text_completion"
		body["choices"] = []any{map[string]any{
			"text": f.Content, "index": Num(0), "logprobs": nil, "finish_reason": f.FinishReason,
		}}
		return body
	}
	body["id"] = "chatcmpl-tf" + snapshotID
	body["object"] = "chat.completion"
	msg := map[string]any{"role": "assistant", "content": f.Content, "refusal": nil}
	if len(f.ToolCalls) > 0 {
		msg["tool_calls"] = DeepCopy(f.ToolCalls)
		if f.Content == "" {
			msg["content"] = nil
		}
	}
	body["choices"] = []any{map[string]any{
		"index": Num(0), "message": msg, "logprobs": nil, "finish_reason": f.FinishReason,
	}}
	return body
}
