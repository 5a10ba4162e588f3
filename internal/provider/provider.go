// Package provider is the base of traceforge's wire layer (DESIGN §12.1,
// docs/architecture.md "Wire layer"). It defines the Format interface that
// every wire format implements, one sub-package per format
// (openai/chat, openai/completions, anthropic/messages), which the registry
// (provider/registry) lists; and the machinery the formats share: the parsed
// Request, the SSE parser, JSON helpers, the Assembler interface, the
// sentinel errors, error replies, the OpenAI choice-based machinery
// (OpenAIWire: chat and completions reuse it instead of importing each
// other) and the one equality (Equal, Diff, Notes) over snapshot.Fields.
//
// Formats import this package, never each other; record, replay, verify,
// check and the Go transport reach formats only through the registry.
//
// Everything works on generic JSON (map[string]any with numbers decoded as
// json.Number, see Decode), never on SDK types, so unknown provider fields
// survive untouched.
package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Name is a provider folder name in a snapshot set.
type Name string

// The providers. OpenAI covers every OpenAI-compatible server; Gemini and
// Ollama are their native wire formats (format 1.1.0).
const (
	OpenAI    Name = "openai"
	Anthropic Name = "anthropic"
	Gemini    Name = "gemini"
	Ollama    Name = "ollama"
)

// Endpoint is the canonical API path of a call, independent of the path prefix
// the application used. It is the E of the request key (DESIGN §4).
type Endpoint string

// The endpoints of format 1.0.0.
const (
	ChatCompletions Endpoint = "/v1/chat/completions"
	Completions     Endpoint = "/v1/completions"
	Messages        Endpoint = "/v1/messages"
)

// Sentinel errors. Errors returned by this package wrap one of them (with %w)
// and add context such as the event number or a JSON pointer.
var (
	// ErrBrokenStream: a stream ended before it completed (no `data: [DONE]`
	// or finish reason for OpenAI, no `message_stop` for Anthropic) or
	// carried an error event. Such a stream must never become a snapshot.
	ErrBrokenStream = errors.New("broken stream")
	// ErrNoUsage: a response carries no token usage, so tokens_used cannot
	// be known without guessing; the call is refused.
	ErrNoUsage = errors.New("response has no usage")
	// ErrMalformed: a body or stream event is not the provider's shape.
	ErrMalformed = errors.New("malformed response")
	// ErrStreamError: the stream carried an error event (OpenAI
	// `data: {"error":…}`, Anthropic `event: error`). Errors wrapping it
	// also wrap ErrBrokenStream.
	ErrStreamError = errors.New("error event in stream")
	// ErrInconsistent: a stream whose parts contradict each other (a
	// tool-call index that changes its id or name, a gap in tool-call
	// indexes, arguments for an index never opened). The SDKs disagree on
	// what such a stream means, so it is refused, never guessed (DESIGN
	// §12.10.3). Errors wrapping it also wrap ErrMalformed.
	ErrInconsistent = errors.New("inconsistent tool-call deltas")
)

// Decode parses one JSON object with numbers kept as json.Number. Trailing
// data after the object is an error.
func Decode(data []byte) (map[string]any, error) {
	v, err := DecodeValue(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: JSON value is %s, not an object", ErrMalformed, TypeName(v))
	}
	return m, nil
}

// DecodeValue parses one JSON value like Decode, of any type; errors wrap
// ErrMalformed.
func DecodeValue(data []byte) (any, error) {
	v, err := snapshot.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return v, nil
}

// DecodeEvent decodes one stream event's JSON as DecodeValue does, except
// that integers beyond 2^53 (a 64-bit seed in every chunk from Together or
// the Hugging Face router, DESIGN §13.3) are accepted, kept as json.Number
// text: a stream is stored as sent (response.wire), never canonicalized,
// so such a number only has to survive assembly.
func DecodeEvent(data []byte) (any, error) {
	v, err := DecodeValue(data)
	if err == nil {
		return v, nil
	}
	if m, ok := DecodeBeyondJCS(data); ok {
		return m, nil
	}
	return nil, err
}

// Marshal encodes v without HTML escaping and without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ordered is a JSON object that keeps its key order when encoded, so that
// synthesized bodies and events look like the provider's own.
type ordered []kv

type kv struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := Marshal(e.k)
		if err != nil {
			return nil, err
		}
		v, err := Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// TypeName names the JSON type of v for error messages ("an object", "a
// string", "null", …).
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int64, int32:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// AsInt returns an integral number as int64 (json.Number, or the Go numeric
// types a caller may have put into a map).
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil || f != float64(int64(f)) {
			return 0, false
		}
		return int64(f), true
	case float64:
		if n != float64(int64(n)) {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	}
	return 0, false
}

// Num is i as a JSON number.
func Num(i int64) json.Number {
	return json.Number(fmt.Sprint(i))
}

// DeepCopy copies generic JSON so that results never alias caller data.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = DeepCopy(e)
		}
		return s
	}
	return v
}

// Ordered is a JSON object that keeps its key order when encoded, built from
// alternating keys (strings) and values: Ordered("type", "error", "error", …).
func Ordered(kvs ...any) json.Marshaler {
	o := make(ordered, 0, len(kvs)/2)
	for i := 0; i+1 < len(kvs); i += 2 {
		o = append(o, kv{kvs[i].(string), kvs[i+1]})
	}
	return o
}

// MarshalOrdered encodes Ordered(kvs...) without HTML escaping.
func MarshalOrdered(kvs ...any) []byte {
	b, _ := Marshal(Ordered(kvs...))
	return b
}

// OrderedFirst is m as a JSON object that writes the members named in first
// (those present, in that order) and then the others sorted by name: the
// member order of a provider's own bodies, for synthesized streams.
func OrderedFirst(m map[string]any, first ...string) json.Marshaler {
	kvs := make([]any, 0, 2*len(m))
	seen := make(map[string]bool, len(first))
	for _, k := range first {
		if v, ok := m[k]; ok && !seen[k] {
			kvs = append(kvs, k, v)
		}
		seen[k] = true
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		kvs = append(kvs, k, m[k])
	}
	return Ordered(kvs...)
}
