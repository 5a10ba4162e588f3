package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the deepest JSON nesting a snapshot file or manifest may use.
const MaxDepth = 256

// maxSafeInteger is 2^53: larger integers cannot be canonicalized exactly.
const maxSafeInteger = 1 << 53

// ErrMalformedJSON is wrapped by every DecodeError.
var ErrMalformedJSON = errors.New("malformed JSON")

// DecodeError reports why bytes are not an acceptable JSON document, with
// where it happened.
type DecodeError struct {
	Offset  int    // byte offset of the problem
	Line    int    // 1-based line
	Column  int    // 1-based column (bytes)
	Pointer string // JSON pointer of the value being read ("" = document)
	Reason  string
}

func (e *DecodeError) Error() string {
	loc := fmt.Sprintf("line %d, column %d", e.Line, e.Column)
	if e.Pointer != "" {
		return fmt.Sprintf("%s (at %s, %s)", e.Reason, e.Pointer, loc)
	}
	return fmt.Sprintf("%s (%s)", e.Reason, loc)
}

func (e *DecodeError) Unwrap() error { return ErrMalformedJSON }

// Decode parses one JSON document strictly: valid UTF-8 without a byte order
// mark, no duplicate object keys, no lone surrogate escapes, no integer
// beyond 2^53, nesting at most MaxDepth, nothing after the document.
// Objects become map[string]any, arrays []any, numbers json.Number.
func Decode(data []byte) (any, error) { return decode(data, false) }

// DecodeAliasing is Decode with the strings, object keys and numbers that
// hold no escape sharing data's memory instead of being copied: the same
// values, checks and errors, fewer allocations. data must not be modified
// or reused while the result, or any string taken from it, is in use. It
// is for a request that is keyed and let go (replay), never for what is
// kept.
func DecodeAliasing(data []byte) (any, error) { return decode(data, true) }

func decode(data []byte, alias bool) (any, error) {
	ip := itemBufs.Get().(*[]any)
	d := &decoder{data: data, alias: alias, items: (*ip)[:0]}
	defer func() {
		// Past len every item is already cleared (array truncates with
		// clear): only what an error left needs clearing.
		clear(d.items)
		if cap(d.items) <= maxPooledItems {
			*ip = d.items[:0]
			itemBufs.Put(ip)
		}
	}()
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, d.errAt(0, "file starts with a UTF-8 byte order mark; save it without BOM")
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, d.errAt(off, "invalid UTF-8")
	}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(data) {
		return nil, d.errAt(d.pos, "trailing data after the JSON document")
	}
	return v, nil
}

// itemBufs holds the array item stacks of decoders (decoder.items), up to
// maxPooledItems items: a rare huge array does not stay pinned.
var itemBufs = sync.Pool{New: func() any { return new([]any) }}

const maxPooledItems = 4096

type decoder struct {
	data  []byte
	pos   int
	path  []string
	alias bool     // text shares data's memory (DecodeAliasing)
	items []any    // array items being read (array)
	strs  []string // the current slab of string headers (box)
}

// text returns data[i:j] as a string: a copy, or data's memory itself when
// d.alias.
func (d *decoder) text(i, j int) string {
	if d.alias {
		if i == j {
			return ""
		}
		return unsafe.String(&d.data[i], j-i)
	}
	return string(d.data[i:j])
}

func (d *decoder) pointer() string {
	if len(d.path) == 0 {
		return ""
	}
	var b strings.Builder
	path := d.path
	if len(path) > 16 {
		for _, p := range path[:16] {
			b.WriteByte('/')
			b.WriteString(EscapePointer(p))
		}
		b.WriteString("/…")
		return b.String()
	}
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(EscapePointer(p))
	}
	return b.String()
}

// EscapePointer escapes one JSON pointer reference token (RFC 6901).
func EscapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func (d *decoder) errAt(off int, reason string) error {
	line, col := 1, 1
	if off > len(d.data) {
		off = len(d.data)
	}
	for _, c := range d.data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &DecodeError{Offset: off, Line: line, Column: col, Pointer: d.pointer(), Reason: reason}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.errAt(d.pos, "unexpected end of JSON (truncated file?)")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		if depth >= MaxDepth {
			return nil, d.errAt(d.pos, fmt.Sprintf("JSON nested deeper than %d levels", MaxDepth))
		}
		return d.object(depth + 1)
	case c == '[':
		if depth >= MaxDepth {
			return nil, d.errAt(d.pos, fmt.Sprintf("JSON nested deeper than %d levels", MaxDepth))
		}
		return d.array(depth + 1)
	case c == '"':
		s, boxed, err := d.strInterned()
		if err != nil {
			return nil, err
		}
		if boxed != nil {
			return boxed, nil
		}
		return d.box(s, stringType), nil
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return nil, d.errAt(d.pos, fmt.Sprintf("unexpected character %q", rune(c)))
	}
}

func (d *decoder) literal(s string) error {
	if len(d.data)-d.pos < len(s) || string(d.data[d.pos:d.pos+len(s)]) != s {
		if len(d.data)-d.pos < len(s) && strings.HasPrefix(s, string(d.data[d.pos:])) {
			return d.errAt(len(d.data), "unexpected end of JSON (truncated file?)")
		}
		return d.errAt(d.pos, "invalid literal")
	}
	d.pos += len(s)
	return nil
}

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // {
	m := map[string]any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errAt(d.pos, "unexpected end of JSON (truncated file?)")
		}
		if d.data[d.pos] != '"' {
			return nil, d.errAt(d.pos, "expected a quoted object key")
		}
		keyPos := d.pos
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		// A duplicate key is reported before anything after it, as if it
		// were looked up first; it is found by the insertion itself (one
		// map operation per member, not two), or after an error that
		// follows it.
		mark := len(d.path)
		d.skipSpace()
		if d.pos >= len(d.data) {
			if _, dup := m[k]; dup {
				return nil, d.duplicate(mark, keyPos, k)
			}
			return nil, d.errAt(d.pos, "unexpected end of JSON (truncated file?)")
		}
		if d.data[d.pos] != ':' {
			if _, dup := m[k]; dup {
				return nil, d.duplicate(mark, keyPos, k)
			}
			return nil, d.errAt(d.pos, "expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		d.path = append(d.path, k)
		v, err := d.value(depth)
		if err != nil {
			if _, dup := m[k]; dup {
				return nil, d.duplicate(mark, keyPos, k)
			}
			return nil, err
		}
		d.path = d.path[:len(d.path)-1]
		n := len(m)
		if m[k] = v; len(m) == n {
			return nil, d.duplicate(mark, keyPos, k)
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errAt(d.pos, "unexpected end of JSON (truncated file?)")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return m, nil
		default:
			return nil, d.errAt(d.pos, "expected ',' or '}' in object")
		}
	}
}

// duplicate is the error of the duplicate key k at keyPos, in the object
// whose path is d.path[:mark].
func (d *decoder) duplicate(mark, keyPos int, k string) error {
	d.path = append(d.path[:mark], k)
	err := d.errAt(keyPos, fmt.Sprintf("duplicate object key %q", k))
	d.path = d.path[:mark]
	return err
}

func (d *decoder) array(depth int) (any, error) {
	d.pos++ // [
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return []any{}, nil
	}
	// The items are gathered on d.items (a stack shared by nested arrays)
	// and copied into one slice of the exact length: one allocation per
	// array instead of one per doubling.
	mark := len(d.items)
	for i := 0; ; i++ {
		d.skipSpace()
		d.path = append(d.path, strconv.Itoa(i))
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		d.path = d.path[:len(d.path)-1]
		d.items = append(d.items, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errAt(d.pos, "unexpected end of JSON (truncated file?)")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			a := slices.Clone(d.items[mark:])
			clear(d.items[mark:])
			d.items = d.items[:mark]
			return a, nil
		default:
			return nil, d.errAt(d.pos, "expected ',' or ']' in array")
		}
	}
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func (d *decoder) hex4(at int) (rune, bool) {
	if at+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		h := hexVal(d.data[at+i])
		if h < 0 {
			return 0, false
		}
		r = r<<4 | h
	}
	return r, true
}

func (d *decoder) str() (string, error) {
	s, _, err := d.strInterned()
	return s, err
}

// strInterned reads a string like str; a short one without escapes that is
// one of the interned strings (Decode only) is that string, with its boxed
// value: no allocation for the keys and common values of every snapshot.
func (d *decoder) strInterned() (string, any, error) {
	start := d.pos
	d.pos++ // opening quote
	// Fast path: no escapes.
	i := d.pos
	for i < len(d.data) {
		if i = plainEnd(d.data, i); i == len(d.data) {
			break
		}
		c := d.data[i]
		if c == '"' {
			if !d.alias && i-d.pos <= maxInterned {
				if v, ok := interned[string(d.data[d.pos:i])]; ok {
					d.pos = i + 1
					return v.(string), v, nil
				}
			}
			s := d.text(d.pos, i)
			d.pos = i + 1
			return s, nil, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", nil, d.errAt(i, "control character in string (must be escaped)")
		}
		i++
	}
	var b strings.Builder
	b.Write(d.data[d.pos:i])
	d.pos = i
	for {
		if d.pos >= len(d.data) {
			return "", nil, d.errAt(start, "unterminated string (truncated file?)")
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return b.String(), nil, nil
		case c < 0x20:
			return "", nil, d.errAt(d.pos, "control character in string (must be escaped)")
		case c != '\\':
			b.WriteByte(c)
			d.pos++
			continue
		}
		if d.pos+1 >= len(d.data) {
			return "", nil, d.errAt(start, "unterminated string (truncated file?)")
		}
		e := d.data[d.pos+1]
		d.pos += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4(d.pos)
			if !ok {
				return "", nil, d.errAt(d.pos-2, "invalid \\u escape")
			}
			d.pos += 4
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 {
					return "", nil, d.errAt(d.pos-6, "lone surrogate escape in string")
				}
				if d.pos+1 >= len(d.data) || d.data[d.pos] != '\\' || d.data[d.pos+1] != 'u' {
					return "", nil, d.errAt(d.pos-6, "lone surrogate escape in string")
				}
				r2, ok := d.hex4(d.pos + 2)
				if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
					return "", nil, d.errAt(d.pos-6, "lone surrogate escape in string")
				}
				d.pos += 6
				r = utf16.DecodeRune(r, r2)
			}
			b.WriteRune(r)
		default:
			return "", nil, d.errAt(d.pos-2, fmt.Sprintf("invalid escape \\%c in string", e))
		}
	}
}

func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	intStart := d.pos
	if n := digits(); n == 0 {
		return nil, d.errAt(d.pos, "invalid number")
	}
	if d.data[intStart] == '0' && d.pos-intStart > 1 {
		return nil, d.errAt(start, "invalid number (leading zero)")
	}
	isInt := true
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		isInt = false
		d.pos++
		if digits() == 0 {
			return nil, d.errAt(d.pos, "invalid number")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		isInt = false
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return nil, d.errAt(d.pos, "invalid number")
		}
	}
	text := d.text(start, d.pos)
	if reason := numberLimit(text, isInt); reason != "" {
		return nil, d.errAt(start, reason)
	}
	return d.box(text, numberType), nil
}

// numberLimit is why Decode refuses the number literal text (isInt: no
// fraction, no exponent), or "" when it reads it. AsDecoded applies it to
// the text the encoder writes.
func numberLimit(text string, isInt bool) string {
	if isInt {
		if len(text) > 17 || absInt(text) > maxSafeInteger {
			return fmt.Sprintf("integer %s is beyond 2^53 and cannot be hashed exactly; store it as a string", text)
		}
		return ""
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		return fmt.Sprintf("number %s is out of range", text)
	}
	// RFC 8785 writes numbers below 1e21 without an exponent, so 1E20
	// would be stored as the integer 100000000000000000000, which this
	// decoder refuses on the next read: refuse it now, like the integer.
	if a := math.Abs(f); a > maxSafeInteger && a < 1e21 {
		return fmt.Sprintf("number %s is an integer beyond 2^53 and cannot be hashed exactly; store it as a string", text)
	}
	return ""
}

// eface is the layout of an interface value without methods (the
// runtime's eface): its type, and a pointer to its value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// The type words of string and json.Number interface values.
var (
	stringType = typeWord("")
	numberType = typeWord(json.Number(""))
)

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// box returns s as an interface value of type typ (stringType or
// numberType). Go boxes a string by allocating its 16-byte header, one
// allocation per string and number of the document; DecodeAliasing takes
// the headers from slabs of d.strs instead, one allocation per many (a
// request is keyed and let go, so that the values share a slab pins
// nothing). Each header is written once, before its interface value
// exists, and never changed: the value is an ordinary immutable string.
func (d *decoder) box(s string, typ unsafe.Pointer) any {
	if !d.alias {
		if typ == numberType {
			return json.Number(s)
		}
		return s
	}
	if len(d.strs) == cap(d.strs) {
		// The first slab is sized for about one value per 128 bytes of
		// text, the next ones twice the last.
		n := 2 * cap(d.strs)
		if n == 0 {
			n = len(d.data) / 128
		}
		d.strs = make([]string, 0, min(max(n, 8), maxStrSlab))
	}
	d.strs = append(d.strs, s)
	e := eface{typ: typ, data: unsafe.Pointer(&d.strs[len(d.strs)-1])}
	return *(*any)(unsafe.Pointer(&e))
}

// interned are strings of nearly every snapshot file — the object keys of
// the record and of each wire format's request and response, and common
// values — each with its boxed value. Decode returns these very strings
// instead of copying them out of the file (strings are immutable: sharing
// them changes nothing but the allocations); only strings of at most
// maxInterned bytes are looked up.
var interned = func() map[string]any {
	m := map[string]any{}
	for _, s := range strings.Fields(`
		version snapshots hash id timestamp source file line function endpoint request request_headers
		defaults_applied key_normalizers response lineage parent_id turn content tokens_used latency_ms
		finish_reason tool_calls usage model stream body anthropic-version anthropic-beta
		messages role system temperature max_tokens max_completion_tokens max_output_tokens seed top_p
		stream_options include_usage tools tool_choice response_format stop n user metadata store
		choices index message refusal annotations logprobs object created system_fingerprint service_tier
		prompt_tokens completion_tokens total_tokens prompt_tokens_details completion_tokens_details
		cached_tokens audio_tokens reasoning_tokens accepted_prediction_tokens rejected_prediction_tokens
		name arguments type text stop_reason stop_sequence input_tokens output_tokens
		cache_creation_input_tokens cache_read_input_tokens server_tool_use service_tier
		input instructions output status created_at background error incomplete_details max_tool_calls
		parallel_tool_calls previous_response_id prompt_cache_key reasoning effort summary
		safety_identifier top_logprobs truncation verbosity format input_tokens_details
		output_tokens_details
		contents parts systemInstruction generationConfig maxOutputTokens candidates finishReason
		usageMetadata promptTokenCount candidatesTokenCount totalTokenCount promptTokensDetails
		modality tokenCount modelVersion responseId
		user assistant developer tool stop length end_turn max_tokens tool_use chat.completion
		message output_text completed in_progress incomplete auto default disabled medium low high
		none STOP TEXT MAX_TOKENS 1.0.0 1.1.0 2023-06-01 /v1/messages /v1/responses /v1/chat/completions
	`) {
		if len(s) > maxInterned {
			panic("interned string longer than maxInterned: " + s)
		}
		m[s] = s
	}
	return m
}()

// maxInterned is the longest string interned holds.
const maxInterned = 32

// maxStrSlab is the most string headers one slab of box holds (4 KiB).
const maxStrSlab = 256

func absInt(s string) uint64 {
	s = strings.TrimPrefix(s, "-")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return ^uint64(0)
	}
	return n
}
