package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// encoded caches the bytes Respond sends for one snapshot: they depend on
// the snapshot and the request's stream/include_usage flags only, and
// encoding them (above all synthesizing a stream) costs far more than
// serving them. Streams are kept only up to keepLimit bytes. An Entries
// holds one per record it served.
type encoded struct {
	jsonOnce sync.Once
	body     []byte
	jsonErr  error

	streams [2]atomic.Pointer[chunks] // without, with the usage chunk
	headers atomic.Pointer[replyHeaders]

	// Set by Compact, whose snapshot has no body: body is encoded at load
	// (compact = true); synth and bodyErr are Body's results; fingerprint
	// serves closeness (Fingerprint).
	compact     bool
	synth       bool
	bodyErr     error
	fingerprint []uint64
	// headerVals are a compact snapshot's header values (id, length,
	// stream content type), built by Compact; fixed says which are set.
	// headerValues hands out views of them.
	headerVals [3]string
	fixed      uint8
}

// The header values Compact built (encoded.fixed).
const (
	fixedID uint8 = 1 << iota
	fixedLength
	fixedStream
)

// Header values every reply shares (see Respond).
var (
	headerTrue    = []string{"true"}
	headerJSON    = []string{"application/json"}
	headerNoCache = []string{"no-cache"}
)

// replyHeaders are the per-snapshot header values of Respond.
type replyHeaders struct {
	id     []string // X-Traceforge-Snapshot-Id
	length []string // Content-Length of the JSON body (nil for streams)
	stream []string // the stream's Content-Type
}

// headerValues returns the header values of s's replies (payload: its
// JSON body, nil for a stream), built on first use.
func (c *encoded) headerValues(s *check.Snapshot, payload []byte) replyHeaders {
	if c.fixed&fixedID != 0 {
		// Views of the values Compact built: full slices (len == cap).
		hv := &c.headerVals
		r := replyHeaders{id: hv[0:1:1]}
		if c.fixed&fixedLength != 0 {
			r.length = hv[1:2:2]
		}
		if c.fixed&fixedStream != 0 {
			r.stream = hv[2:3:3]
		}
		if payload == nil || r.length != nil {
			return r
		}
	}
	if p := c.headers.Load(); p != nil && (payload == nil || p.length != nil) {
		return *p
	}
	r := &replyHeaders{id: []string{s.Record.ID}}
	if f := format(s); f != nil {
		r.stream = []string{f.StreamContentType()}
	}
	if payload != nil {
		r.length = []string{strconv.Itoa(len(payload))}
	}
	c.headers.Store(r)
	return *r
}

// decode returns the body of a compact snapshot, decoded from its JSON.
func (c *encoded) decode() (map[string]any, error) {
	if c.jsonErr != nil {
		return nil, c.jsonErr
	}
	v, err := snapshot.Decode(c.body)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("response body is %T, not a JSON object", v)
	}
	return m, nil
}

// json is the body as JSON (one line, LF-terminated).
func (c *encoded) json(body map[string]any) ([]byte, error) {
	c.jsonOnce.Do(func() {
		var b bytes.Buffer
		c.jsonErr = writeJSON(&b, body)
		c.body = bytes.Clone(b.Bytes()) // without the buffer's spare capacity: kept for the set's life
	})
	return c.body, c.jsonErr
}

// wireJSON is json for a snapshot whose plain answer is kept as text
// (response.wire): that text, byte for byte.
func (c *encoded) wireJSON(text string) []byte {
	c.jsonOnce.Do(func() { c.body = []byte(text) })
	return c.body
}

func usageSlot(includeUsage bool) int {
	if includeUsage {
		return 1
	}
	return 0
}

// cachedStream is the kept stream, nil when none is kept. The events must
// not be modified.
func (c *encoded) cachedStream(includeUsage bool) chunks {
	if p := c.streams[usageSlot(includeUsage)].Load(); p != nil {
		return *p
	}
	return nil
}

// keepStream keeps a complete synthesized stream.
func (c *encoded) keepStream(includeUsage bool, events chunks) {
	c.streams[usageSlot(includeUsage)].CompareAndSwap(nil, &events)
}

// chunks keeps every Write as one event (SynthesizeStream writes one event
// per call).
type chunks [][]byte

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
