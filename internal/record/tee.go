package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/replay"
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

	sse          bool
	encoding     string // Content-Encoding of src ("" = identity)
	decodeInline bool   // strip mode over a compressed src: decode first
	in           io.Reader

	asm     provider.Assembler
	strip   io.WriteCloser
	pending bytes.Buffer // stripped bytes not yet handed out
	scratch []byte

	buf      bytes.Buffer // JSON answer, or the raw compressed answer
	fed      int64
	tooLarge bool
	readErr  error

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

// observe feeds bytes to the snapshot side, up to the snapshot file cap.
func (t *tee) observe(b []byte) {
	if t.tooLarge || len(b) == 0 {
		return
	}
	t.fed += int64(len(b))
	if t.fed > snapshot.MaxSnapshotFileSize {
		t.tooLarge = true
		t.buf = bytes.Buffer{}
		return
	}
	if t.sse && t.observedEncoding() == "" {
		_, _ = t.asm.Write(b) // a malformed stream is reported by Done
		return
	}
	t.buf.Write(b)
}

// end is called once the upstream body ended (io.EOF) or broke.
func (t *tee) end(err error) {
	t.once.Do(func() {
		if errors.Is(err, io.EOF) {
			t.r.complete(t)
			return
		}
		c := t.c
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
	t.once.Do(func() {
		c := t.c
		t.r.addProblem(&problem{Kind: KindClientClosed, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key, resolvable: true,
			Message: "the application stopped reading before the answer was complete; not snapshotted",
			Fix:     "let the call finish (check the application's timeouts) and record again"})
	})
	return err
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
		fail(KindRefused, fmt.Sprintf("the answer is larger than the %d MiB snapshot limit; not snapshotted", snapshot.MaxSnapshotFileSize>>20),
			"lower max_tokens for the recorded calls")
		return
	}
	content := t.buf.Bytes()
	if enc := t.observedEncoding(); enc != "" {
		d, err := decoder(enc, bytes.NewReader(content))
		if err == nil {
			content, err = io.ReadAll(io.LimitReader(d, snapshot.MaxSnapshotFileSize+1))
		}
		if err != nil {
			fail(KindBadResponse, fmt.Sprintf("cannot decode the %s answer (%v); passed through, not snapshotted", enc, err), "record again")
			return
		}
		if int64(len(content)) > snapshot.MaxSnapshotFileSize {
			fail(KindRefused, "the decoded answer is larger than the snapshot limit; not snapshotted", "lower max_tokens for the recorded calls")
			return
		}
		if t.sse {
			_, _ = t.asm.Write(content)
		}
	}
	var body map[string]any
	if t.sse {
		b, err := t.asm.Done()
		if err != nil {
			if errors.Is(err, provider.ErrBrokenStream) {
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
		if err != nil || !ok {
			if err == nil {
				err = errors.New("not a JSON object")
			}
			fail(KindBadResponse, fmt.Sprintf("the answer is not a JSON object traceforge can store (%v); not snapshotted", err), "check that the upstream speaks the "+string(c.req.Provider)+" wire format")
			return
		}
		body = m
	}
	// The application may chain its next call on this answer's id at once.
	if id, ok := body["id"].(string); ok {
		r.chains.add(id, replay.ChainParent{ID: c.req.ID(), Turn: c.turn})
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
	r.commit(c, body, fields, latency)
}
