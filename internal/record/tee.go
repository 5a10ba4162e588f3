package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// tee is the response body the ReverseProxy copies to the application. Every
// byte it hands out is also observed for the snapshot: an SSE stream goes
// into the provider's assembler as it arrives, a JSON answer into a buffer.
// Compressed answers are buffered as sent and decoded once complete, so the
// application gets the bytes exactly as the upstream sent them. With strip
// set (the proxy added include_usage), the application gets the stream
// rewritten by provider.NewUsageStripper instead, uncompressed.
type tee struct {
	r   *Recorder
	c   *call
	src io.ReadCloser
	ctx context.Context // the call's: done when the application hung up

	sse          bool
	encoding     string // Content-Encoding of src ("" = identity)
	decodeInline bool   // strip mode over a compressed src: decode first
	in           io.Reader

	asm     provider.Assembler
	wire    *wireCapture // the stream's events as sent (response.wire)
	strip   io.WriteCloser
	pending bytes.Buffer // stripped bytes not yet handed out
	scratch []byte

	buf       bytes.Buffer // JSON answer, or the raw compressed answer
	fed       int64
	nextCheck int64 // fed at which the assembler's size is looked at next
	tooLarge  bool
	readErr   error

	once sync.Once
}

// observedEncoding is the encoding of the bytes observe sees.
func (t *tee) observedEncoding() string {
	if t.decodeInline {
		return ""
	}
	return t.encoding
}

func (t *tee) Read(p []byte) (int, error) {
	if t.strip == nil {
		n, err := t.src.Read(p)
		t.observe(p[:n])
		if err != nil {
			t.end(err)
		}
		return n, err
	}
	for {
		if t.pending.Len() > 0 {
			return t.pending.Read(p)
		}
		if t.readErr != nil {
			return 0, t.readErr
		}
		if t.in == nil {
			t.in = t.src
			if t.decodeInline {
				d, err := decoder(t.encoding, t.src)
				if err != nil {
					t.readErr = err
					t.end(err)
					continue
				}
				t.in = d
			}
		}
		if t.scratch == nil {
			t.scratch = make([]byte, 32<<10)
		}
		n, err := t.in.Read(t.scratch)
		if n > 0 {
			t.observe(t.scratch[:n])
			if _, werr := t.strip.Write(t.scratch[:n]); werr != nil && err == nil {
				err = werr
			}
		}
		if err != nil {
			if err == io.EOF {
				_ = t.strip.Close()
			}
			t.readErr = err
			t.end(err)
		}
	}
}

// maxSnapshot is the snapshot file cap the proxy applies (a variable so
// that tests can lower it).
var maxSnapshot int64 = snapshot.MaxSnapshotFileSize

// heldCheckEvery is how often (in stream bytes) the assembler's size is
// compared with the cap.
const heldCheckEvery = 64 << 10

// observe feeds bytes to the snapshot side, up to the snapshot file cap.
// The cap applies to the snapshot, not to the bytes on the wire: a stream
// is capped by what its assembler holds (DESIGN §12.10.6), since its
// framing can be thirty times the answer; everything else by its bytes.
func (t *tee) observe(b []byte) {
	if t.tooLarge || len(b) == 0 {
		return
	}
	t.fed += int64(len(b))
	if t.sse && t.observedEncoding() == "" {
		_, _ = t.asm.Write(b) // a malformed stream is reported by Done
		t.wire.write(b)
		if t.assemblerTooLarge() || t.wire.size > maxSnapshot {
			t.tooLarge = true
		}
		return
	}
	if t.fed > maxSnapshot {
		t.tooLarge = true
		t.buf = bytes.Buffer{}
		return
	}
	t.buf.Write(b)
}

// assemblerTooLarge reports whether the stream's assembler holds more than
// the cap (looked at every heldCheckEvery bytes; an assembler that cannot
// tell its size is capped by the bytes fed).
func (t *tee) assemblerTooLarge() bool {
	sized, ok := t.asm.(provider.SizedAssembler)
	if !ok {
		return t.fed > maxSnapshot
	}
	if t.fed < t.nextCheck {
		return false
	}
	t.nextCheck = t.fed + heldCheckEvery
	return sized.Held() > maxSnapshot
}

// feed decodes a complete compressed stream into the assembler, under the
// same cap as observe.
func (t *tee) feed(d io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := d.Read(buf)
		if n > 0 {
			t.fed += int64(n)
			_, _ = t.asm.Write(buf[:n])
			t.wire.write(buf[:n])
			if t.assemblerTooLarge() || t.wire.size > maxSnapshot {
				t.tooLarge = true
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// end is called once the upstream body ended (io.EOF) or broke.
func (t *tee) end(err error) {
	t.once.Do(func() {
		if errors.Is(err, io.EOF) {
			t.r.complete(t)
			return
		}
		c := t.c
		if t.ctx != nil && t.ctx.Err() != nil {
			// The read failed because the application hung up (its
			// request's context ended), not because the upstream did.
			t.clientClosed()
			return
		}
		kind, msg := KindBroken, fmt.Sprintf("the upstream answer broke off before it was complete (%v); the application saw the same; not snapshotted", err)
		if errors.Is(err, errUnsupportedEncoding) {
			kind, msg = KindBadResponse, fmt.Sprintf("%v; not snapshotted", err)
		}
		t.r.addProblem(&problem{Kind: kind, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key, resolvable: true,
			Message: msg, Fix: "record again; a stream cut mid-way is never saved"})
	})
}

func (t *tee) Close() error {
	err := t.src.Close()
	t.once.Do(t.clientClosed)
	return err
}

// clientClosed lists the call as ended by the application.
func (t *tee) clientClosed() {
	c := t.c
	t.r.addProblem(&problem{Kind: KindClientClosed, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key, resolvable: true,
		Message: "the application stopped reading before the answer was complete; not snapshotted",
		Fix:     "let the call finish (check the application's timeouts) and record again"})
}

// complete turns a finished answer into a snapshot (or a listed problem).
func (r *Recorder) complete(t *tee) {
	c := t.c
	latency := r.now().Sub(c.start).Milliseconds()
	if latency < 0 {
		latency = 0
	}
	fail := func(kind Kind, msg, fix string) {
		r.addProblem(&problem{Kind: kind, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key, resolvable: true, Message: msg, Fix: fix})
	}
	if t.tooLarge {
		fail(KindRefused, fmt.Sprintf("the answer is larger than the %d MiB snapshot limit; not snapshotted", maxSnapshot>>20),
			"lower max_tokens for the recorded calls")
		return
	}
	content := t.buf.Bytes()
	if enc := t.observedEncoding(); enc != "" {
		d, err := decoder(enc, bytes.NewReader(content))
		if err == nil {
			if t.sse {
				t.fed = 0
				err = t.feed(d)
			} else {
				content, err = io.ReadAll(io.LimitReader(d, maxSnapshot+1))
			}
		}
		if err != nil {
			fail(KindBadResponse, fmt.Sprintf("cannot decode the %s answer (%v); passed through, not snapshotted", enc, err), "record again")
			return
		}
		if t.tooLarge || !t.sse && int64(len(content)) > maxSnapshot {
			fail(KindRefused, fmt.Sprintf("the decoded answer is larger than the %d MiB snapshot limit; not snapshotted", maxSnapshot>>20), "lower max_tokens for the recorded calls")
			return
		}
	}
	var body map[string]any
	wire := ""                      // a plain answer kept as text (DESIGN §13.4)
	var events *snapshot.WireStream // a stream's events as sent
	if t.sse {
		b, err := t.asm.Done()
		if err == nil {
			events, err = t.wire.done()
		}
		if err != nil {
			if errors.Is(err, provider.ErrInconsistent) {
				fail(KindBadResponse, fmt.Sprintf("the stream contradicts itself (%v): the SDKs disagree on what such a stream means, so it is refused, not guessed; not snapshotted", err),
					"record again; if the upstream keeps sending such tool-call deltas, record the call without streaming")
			} else if errors.Is(err, provider.ErrBrokenStream) {
				fail(KindBroken, fmt.Sprintf("the stream ended before it was complete (%v); not snapshotted", err), "record again; a stream cut mid-way is never saved")
			} else {
				fail(KindBadResponse, fmt.Sprintf("the stream is not the provider's shape (%v); not snapshotted", err), "check that the upstream speaks the "+string(c.req.Provider)+" wire format")
			}
			return
		}
		body = b
	} else {
		v, err := snapshot.Decode(content)
		m, ok := v.(map[string]any)
		if err != nil && !c.req.Stream {
			// A 200 answer is not refused for numbers JCS cannot hold (a
			// 64-bit seed, DESIGN §13.3): it is kept as text and replayed
			// byte for byte; its fields are read from it as usual.
			if lenient, exact := provider.DecodeBeyondJCS(content); exact {
				m, ok, err, wire = lenient, true, nil, string(content)
			}
		}
		if err != nil || !ok {
			if err == nil {
				err = errors.New("not a JSON object")
			}
			if c.req.Stream {
				// A stream in another framing than the format's (a format
				// may say what the request lacked).
				fix := "stream in the provider's SSE/NDJSON framing"
				if h, ok := c.req.Format.(provider.StreamFramingHinter); ok {
					fix += " (" + h.StreamFramingHint() + ")"
				}
				fail(KindBadResponse, fmt.Sprintf("the call streams, but the answer is neither a %s stream nor one JSON object (%v); not snapshotted", c.req.Format.StreamContentType(), err), fix)
				return
			}
			fail(KindBadResponse, fmt.Sprintf("the answer is not a JSON object traceforge can store (%v); not snapshotted", err), "check that the upstream speaks the "+string(c.req.Provider)+" wire format")
			return
		}
		body = m
	}
	// The application may chain its next call on this answer's id at once.
	if id, ok := body["id"].(string); ok {
		r.chains.add(id, check.ChainParent{ID: c.req.ID(), Turn: c.turn})
	}
	fields, err := c.req.Format.Fields(body)
	if err != nil {
		if errors.Is(err, provider.ErrNoUsage) {
			fail(KindRefused, "the answer carries no token usage, so tokens_used would have to be guessed; not snapshotted",
				"use an upstream that reports usage (tokens_used is never guessed)")
			return
		}
		fail(KindBadResponse, fmt.Sprintf("the answer is not the provider's shape (%v); not snapshotted", err), "check that the upstream speaks the "+string(c.req.Provider)+" wire format")
		return
	}
	if wire != "" {
		body = nil // the stored answer is the text
	}
	r.commit(c, answer{body: body, wire: wire, events: events, fields: fields, latency: latency})
}

// answer is what a completed call stores as its response.
type answer struct {
	body    map[string]any
	wire    string               // a plain answer kept as text
	events  *snapshot.WireStream // a stream's events as sent
	fields  snapshot.Fields
	latency int64
}

// response is the stored response of a: Stream is the request's. A stream
// kept as its events stores no body: the body is what they assemble to
// (DESIGN §13.4, docs/format.md), and the file stays within its size
// budget.
func (a answer) response(stream bool) snapshot.Response {
	body := a.body
	if a.events != nil {
		body = nil
	}
	return snapshot.Response{Fields: a.fields, LatencyMS: a.latency, Stream: stream, Body: body, Wire: a.wire, Events: a.events}
}

// wireCapture records a stream's events as the provider sent them (format
// 1.2.0 response.wire, DESIGN §13.4), each with its offset from the call's
// arrival, through the format's framing (provider.FramingOf).
type wireCapture struct {
	framing provider.Framing
	split   provider.WireCapture
	ms      func() int64
	events  []snapshot.WireEvent
	size    int64 // payload bytes held
	err     error
}

func newWireCapture(f provider.Format, ms func() int64) *wireCapture {
	w := &wireCapture{framing: provider.FramingOf(f), ms: ms}
	w.split = w.framing.NewCapture(func(ev snapshot.WireEvent) {
		ev.MS = w.ms()
		w.size += int64(len(ev.Data) + len(ev.Binary) + len(ev.Frame) + 16)
		w.events = append(w.events, ev)
	})
	return w
}

func (w *wireCapture) write(b []byte) {
	if w.err == nil {
		_, w.err = w.split.Write(b)
	}
}

// done is the captured stream; an error when the framing did not parse.
func (w *wireCapture) done() (*snapshot.WireStream, error) {
	if w.err == nil {
		w.err = w.split.Close()
	}
	if w.err != nil {
		return nil, w.err
	}
	if len(w.events) == 0 {
		return nil, fmt.Errorf("%w: the stream holds no event", provider.ErrMalformed)
	}
	return &snapshot.WireStream{Framing: w.framing.Name(), Newline: w.split.Newline(), Events: w.events}, nil
}
