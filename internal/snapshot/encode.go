package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Canonical returns the RFC 8785 (JCS) bytes of a decoded JSON value
// (map[string]any, []any, string, json.Number, float64, int, int64, bool,
// nil). It writes them directly from the value: object members sorted by
// their UTF-16 code units, strings escaped as ECMAScript's JSON.stringify
// does, numbers formatted by the JCS library's ES6 number serializer
// (jcs.NumberToJSON). Fuzz tests hold it byte for byte to the library's own
// jcs.Transform, which was 40% of `verify`'s CPU when it was used here
// (it parses text that we had just serialized).
//
// The bytes are built in a pooled buffer and copied out at their exact size:
// a record grew its buffer from 1 KiB by doubling, three allocations and
// more than twice its size in garbage per hash (half of the bytes a static
// check allocated per file).
func Canonical(v any) ([]byte, error) {
	bp, b, err := scratchCanonical(v)
	if err != nil {
		return nil, err
	}
	if cap(b) > maxPooledCanonical {
		// A large document (a manifest): keep its buffer rather than copy
		// it (releaseCanonical does not pool it).
		releaseCanonical(bp, b)
		return b, nil
	}
	out := bytes.Clone(b)
	releaseCanonical(bp, b)
	return out, nil
}

// scratchCanonical appends v's canonical bytes to a pooled buffer; the
// caller hands bp and b back with releaseCanonical once done with b (also
// after an error).
func scratchCanonical(v any) (bp *[]byte, b []byte, err error) {
	bp = canonicalBufs.Get().(*[]byte)
	b, err = AppendCanonical((*bp)[:0], v)
	if err != nil {
		releaseCanonical(bp, nil)
		return nil, nil, err
	}
	return bp, b, nil
}

// releaseCanonical returns a buffer of scratchCanonical to the pool,
// grown to b unless b outgrew maxPooledCanonical.
func releaseCanonical(bp *[]byte, b []byte) {
	if b != nil && cap(b) <= maxPooledCanonical {
		*bp = b[:0]
	}
	canonicalBufs.Put(bp)
}

// canonicalBufs holds Canonical's scratch buffers (*[]byte).
var canonicalBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

// maxPooledCanonical is the largest buffer Canonical keeps in its pool.
const maxPooledCanonical = 1 << 20

// CanonicalText is the RFC 8785 text of v, for comparing values (the same
// bytes ids and hashes are computed over); a value that cannot be
// canonicalized is printed with %v instead.
func CanonicalText(v any) string {
	b, err := Canonical(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// CanonicalSHA256 is "sha256:" + hex(sha256(Canonical(v))), written to the
// hash in pieces (WriteCanonical): hashing a manifest of 100k snapshots
// built its 20 MB canonical text by doubling a buffer, 85 MB of garbage.
func CanonicalSHA256(v any) (string, error) {
	h := sha256.New()
	if err := WriteCanonical(h, v); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalChunk is the size at which WriteCanonical hands its bytes on.
var canonicalChunk = 64 << 10

// WriteCanonical writes the RFC 8785 bytes of v to w, in pieces of about
// canonicalChunk bytes (cut between array items and object members).
func WriteCanonical(w io.Writer, v any) error {
	bp := canonicalBufs.Get().(*[]byte)
	defer canonicalBufs.Put(bp)
	var werr error
	flush := func(b []byte) []byte {
		if werr == nil {
			_, werr = w.Write(b)
		}
		return b[:0]
	}
	b, err := appendCanonical((*bp)[:0], v, flush)
	if err != nil {
		return err
	}
	flush(b)
	if cap(b) <= maxPooledCanonical {
		*bp = b[:0]
	}
	return werr
}

// AppendCanonical appends the RFC 8785 bytes of v to dst.
func AppendCanonical(dst []byte, v any) ([]byte, error) { return appendCanonical(dst, v, nil) }

// appendCanonical is AppendCanonical; with flush set, it passes dst to flush
// (which returns the buffer to go on with) whenever it holds canonicalChunk
// bytes after an array item or object member.
func appendCanonical(dst []byte, v any, flush func([]byte) []byte) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return AppendCanonicalString(dst, x)
	case json.Number:
		s, err := numberText(x)
		if err != nil {
			return nil, fmt.Errorf("canonicalize: %w", err)
		}
		return append(dst, s...), nil
	case float64:
		s, err := jcs.NumberToJSON(x)
		if err != nil {
			return nil, fmt.Errorf("canonicalize: %w", err)
		}
		return append(dst, s...), nil
	case int:
		return appendInt(dst, int64(x))
	case int64:
		return appendInt(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e, flush); err != nil {
				return nil, err
			}
			if flush != nil && len(dst) >= canonicalChunk {
				dst = flush(dst)
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		return appendCanonicalObject(dst, x, "", false, flush)
	}
	// Other Go values (built by callers, never read from files): serialize
	// and let the library canonicalize.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	return append(dst, out...), nil
}

// AppendCanonicalString appends the RFC 8785 text of the string s to dst,
// as AppendCanonical(dst, s) does without boxing s; s must be valid UTF-8.
// The check is made while s is escaped: the scan that looks for bytes to
// escape also stops at the first non-ASCII byte, and only from there is the
// rest checked with utf8.ValidString (text is mostly ASCII: one pass, not
// two).
func AppendCanonicalString(dst []byte, s string) ([]byte, error) {
	dst = append(dst, '"')
	start := 0
	ascii := true // s[:i] is ASCII
	for i := 0; i < len(s); i++ {
		if ascii {
			i = plainASCIIEnd(s, i)
		} else {
			i = plainEnd(s, i)
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			if !utf8.ValidString(s[i:]) {
				return nil, fmt.Errorf("canonicalize: string is not valid UTF-8")
			}
			ascii = false
			continue // copied as is with the plain run it starts
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// member is an object member being canonicalized.
type member struct {
	k string
	v any
}

// sortMembers sorts ms by key in UTF-16 code units (RFC 8785 §3.2.3); ascii
// says every key is ASCII (then byte order is the same). Small objects
// (most) are sorted by insertion in place.
func sortMembers(ms []member, ascii bool) {
	switch {
	case !ascii:
		slices.SortFunc(ms, func(a, b member) int {
			switch {
			case lessUTF16(a.k, b.k):
				return -1
			case lessUTF16(b.k, a.k):
				return 1
			}
			return 0
		})
	case len(ms) <= 12:
		for i := 1; i < len(ms); i++ {
			for j := i; j > 0 && ms[j].k < ms[j-1].k; j-- {
				ms[j], ms[j-1] = ms[j-1], ms[j]
			}
		}
	default:
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.k, b.k) })
	}
}

// isASCII reports whether s has no byte of 0x80 or above.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func appendInt(dst []byte, i int64) ([]byte, error) {
	if i > maxSafeInteger || i < -maxSafeInteger {
		s, err := jcs.NumberToJSON(float64(i))
		if err != nil {
			return nil, err
		}
		return append(dst, s...), nil
	}
	return strconv.AppendInt(dst, i, 10), nil
}

// plainEnd returns the index of the first byte at or after i of s that a
// JSON string cannot hold as is ('"', '\\' or a control character), or
// len(s). It tests sixteen bytes at a time (two words, one bounds check):
// text is mostly plain, and the byte loop was most of canonicalizing and
// decoding a snapshot.
func plainEnd[T ~string | ~[]byte](s T, i int) int {
	for ; i+16 <= len(s); i += 16 {
		b := s[i : i+16] // one bounds check, two loads
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		v := uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 |
			uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56
		if (special(w)|special(v))&highs != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if special(w)&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special sets the high bit of every byte of w that is below 0x20, '"' or
// '\\'; of no other byte, except possibly bytes above such a byte (a
// borrow), which callers then find by testing byte by byte from the word's
// start.
func special(w uint64) uint64 {
	ctl := (w - ones*0x20) & ^w
	q := w ^ (ones * '"')
	bs := w ^ (ones * '\\')
	return ctl | (q-ones)&^q | (bs-ones)&^bs
}

// plainASCIIEnd is plainEnd that also stops at a byte of 0x80 or above
// (sixteen bytes at a time measured no faster here).
func plainASCIIEnd(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8] // one bounds check, one load
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if (w|special(w))&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// appendJCSString escapes s as JSON.stringify does: '"', '\\' and control
// characters only; \b \f \n \r \t by name, others as \u00xx.
func appendJCSString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if i = plainEnd(s, i); i == len(s) {
			break
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, s[i])
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape appends the escape of c ('"', '\\' or a control character)
// as JSON.stringify writes it: \b \f \n \r \t by name, others as \u00xx.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// sortUTF16 sorts keys by their UTF-16 code units (RFC 8785 §3.2.3).
func sortUTF16(keys []string) {
	ascii := true
	for _, k := range keys {
		for i := 0; i < len(k); i++ {
			if k[i] >= utf8.RuneSelf {
				ascii = false
				break
			}
		}
		if !ascii {
			break
		}
	}
	if ascii {
		sort.Strings(keys)
		return
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case lessUTF16(a, b):
			return -1
		case lessUTF16(b, a):
			return 1
		}
		return 0
	})
}

// objectKind names the objects of the format whose keys have a fixed order
// (DESIGN §11 "Bytes"); every other object is written in JCS order.
type objectKind int

const (
	kindOther objectKind = iota
	kindFile
	kindRecord
	kindSource
	kindResponse
	kindManifest
	kindManifestEntry
	kindWire      // response.wire of a stream
	kindWireEvent // one of its events: written on one line
)

var fixedOrder = map[objectKind][]string{
	kindFile:          {"version", "snapshots", "hash"},
	kindRecord:        {"id", "timestamp", "source", "endpoint", "request", "request_headers", "defaults_applied", "key_normalizers", "occurrence", "response", "lineage", "hash"},
	kindSource:        {"file", "line", "function"},
	kindResponse:      {"status", "content", "tokens_used", "latency_ms", "finish_reason", "tool_calls", "usage", "model", "stream", "body", "wire"},
	kindManifest:      {"version", "created_at", "updated_at", "snapshots", "hash"},
	kindManifestEntry: {"id", "provider", "file", "hash"},
	kindWire:          {"framing", "newline", "events"},
	kindWireEvent:     {"ms", "event", "id", "headers", "data", "data_b64", "frame_b64"},
}

// childKind says which kind an object's member or array element has.
func childKind(parent objectKind, key string) objectKind {
	switch parent {
	case kindFile:
		if key == "snapshots" {
			return kindRecord
		}
	case kindRecord:
		switch key {
		case "source":
			return kindSource
		case "response":
			return kindResponse
		}
	case kindResponse:
		if key == "wire" {
			return kindWire
		}
	case kindWire:
		if key == "events" {
			return kindWireEvent
		}
	case kindManifest:
		if key == "snapshots" {
			return kindManifestEntry
		}
	}
	return kindOther
}

// MarshalFile writes a snapshot file document the way it is stored:
// 2-space indent, fixed key order, JCS numbers and strings, trailing LF.
func MarshalFile(doc map[string]any) ([]byte, error) { return marshalPretty(doc, kindFile) }

// AppendFile is MarshalFile appending to dst (a buffer the caller reuses).
func AppendFile(dst []byte, doc map[string]any) ([]byte, error) {
	return appendPretty(dst, doc, kindFile)
}

// MarshalManifest writes a manifest document the way it is stored.
func MarshalManifest(doc map[string]any) ([]byte, error) { return marshalPretty(doc, kindManifest) }

// MarshalPretty writes any value with JCS key order, 2-space indent and a trailing LF.
func MarshalPretty(v any) ([]byte, error) { return marshalPretty(v, kindOther) }

// encodedNumber is the text writeValue writes for v when v is a number
// (json.Number, float64, int or int64; ok false for any other type).
func encodedNumber(v any) (text string, ok bool, err error) {
	switch x := v.(type) {
	case json.Number:
		text, err = numberText(x)
	case float64:
		text, err = jcs.NumberToJSON(x)
	case int:
		text = strconv.Itoa(x)
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		return "", false, nil
	}
	return text, true, err
}

func numberText(n json.Number) (string, error) {
	s := string(n)
	if isPlainInt(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil && i <= maxSafeInteger && i >= -maxSafeInteger {
			if i == 0 {
				return "0", nil // "-0" too
			}
			if s[0] != '-' && (s[0] != '0' || len(s) == 1) {
				return s, nil // already canonical
			}
			return strconv.FormatInt(i, 10), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("invalid number %q", s)
	}
	return jcs.NumberToJSON(f)
}

func isPlainInt(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return len(s) <= 17
}

// orderedKeys appends an object's keys to dst: the fixed ones for its kind
// first (those present), then the rest in JCS order (UTF-16 code units).
func orderedKeys(dst []string, m map[string]any, kind objectKind) []string {
	fixed := fixedOrder[kind]
	for _, k := range fixed {
		if _, ok := m[k]; ok {
			dst = append(dst, k)
		}
	}
	start := len(dst)
	for k := range m {
		if len(fixed) == 0 || !slices.Contains(fixed, k) {
			dst = append(dst, k)
		}
	}
	sortUTF16(dst[start:])
	return dst
}

func lessUTF16(a, b string) bool {
	// Fast path: ASCII-only strings compare the same in UTF-8 and UTF-16.
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < utf8.RuneSelf
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < utf8.RuneSelf
	}
	if ascii {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

const hexDigits = "0123456789abcdef"

// writeString writes s as JCS does: only '"', '\\' and control characters
// escaped (appendJCSString into the buffer's spare room).
func writeString(b *bytes.Buffer, s string) {
	b.Write(appendJCSString(b.AvailableBuffer(), s))
}
