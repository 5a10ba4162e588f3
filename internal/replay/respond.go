package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// Options change how Respond answers.
type Options struct {
	// Latency reproduces the recorded latency_ms before the first byte.
	Latency bool
	// Sleep waits d or until ctx is done; nil uses a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Result tells what Respond sent.
type Result struct {
	Streamed    bool
	Synthesized bool
}

// Respond writes the recorded response of s for req: the body as JSON
// (Content-Type: application/json), or, when req asks to stream, a
// stream in the snapshot's wire format (Format.SynthesizeStream; the usage
// chunk only when the request asked for it, e.g.
// stream_options.include_usage). Every reply
// carries X-Traceforge-Snapshot-Id; synthesized replies also carry
// X-Traceforge-Synthesized: true. A snapshot whose body cannot be replayed
// gets a 500 in the provider's error shape with x-should-retry: false, and
// the error is returned. The bytes sent are kept in s's entry, so the
// next reply of s costs little (e nil: nothing is kept).
func (e *Entries) Respond(ctx context.Context, w http.ResponseWriter, req *provider.Request, s *check.Snapshot, o Options) (Result, error) {
	if provider.IsExchange(format(s)) {
		return e.respondExchange(ctx, w, s, o) // the recorded answer as it was (DESIGN §13.4)
	}
	res := Result{Streamed: req.Stream}
	errShape := registry.ForProvider(provider.Name(s.Provider))
	if errShape == nil {
		errShape = req.Format
	}
	if format(s) == nil {
		err := fmt.Errorf("snapshot %s: unknown provider %q", s.Rel, s.Provider)
		provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	enc := e.entry(s)
	var body map[string]any
	var synth bool
	var err error
	if enc.compact {
		synth, err = enc.synth, enc.bodyErr
	} else {
		body, synth, err = fullBody(s)
	}
	res.Synthesized = synth
	if err != nil {
		provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	var payload []byte
	if wire := s.Record.Response.Wire; wire != "" && !req.Stream {
		// The answer as the provider sent it (DESIGN §13.4), not a body
		// synthesized from the fields.
		payload, synth, res.Synthesized = enc.wireJSON(wire), false, false
	} else if !req.Stream {
		if payload, err = enc.json(body); err != nil {
			err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
			provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
			return res, err
		}
	}
	if req.Stream && s.Record.Response.Events != nil {
		// The stream as the provider sent it (DESIGN §13.4).
		res.Synthesized = false
		return res, e.respondWire(ctx, w, req, s, enc, o, errShape)
	}
	if o.Latency && s.Record.Response.LatencyMS > 0 {
		sleep := o.sleeper()
		if err := sleep(ctx, time.Duration(s.Record.Response.LatencyMS)*time.Millisecond); err != nil {
			return res, err
		}
	}
	// The header values are built once per snapshot (headerValues) and set
	// under their canonical names: no per-request canonicalization or
	// allocation. The slices are full (len == cap), so an Add by a wrapper
	// copies rather than writes into them.
	hv := enc.headerValues(s, payload)
	h := w.Header()
	h[provider.HeaderSnapshotID] = hv.id
	if synth {
		h[provider.HeaderSynthesized] = headerTrue
	}
	if !req.Stream {
		h["Content-Type"] = headerJSON
		h["Content-Length"] = hv.length
		w.WriteHeader(http.StatusOK)
		_, err = w.Write(payload)
		return res, err
	}
	// One write and flush per event, as the provider sends them. A small
	// stream is synthesized once and kept; a large one is synthesized
	// lazily for every request, its first event on the wire before the
	// last is built (DESIGN §12.10.1).
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := func() {
		h["Content-Type"] = hv.stream
		h["Cache-Control"] = headerNoCache
		w.WriteHeader(http.StatusOK)
	}
	if events := enc.cachedStream(req.IncludeUsage); events != nil {
		start()
		for _, ev := range events {
			if _, err := w.Write(ev); err != nil {
				return res, err
			}
			flush()
		}
		return res, nil
	}
	if wire := s.Record.Response.Wire; wire != "" {
		// A plain answer kept as text streams from that text, read with
		// its numbers exact (DESIGN §13.4).
		if b, ok := provider.DecodeBeyondJCS([]byte(wire)); ok {
			body = b
		}
	} else if enc.compact {
		// A compact snapshot keeps only the encoded body: decode it again
		// (the same values snapshot.Decode gave the check).
		if body, err = enc.decode(); err != nil {
			err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
			provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
			return res, err
		}
	}
	sw := &streamWriter{w: w, start: start, keep: true}
	err = format(s).SynthesizeStream(body, req.IncludeUsage, sw, flush)
	if err != nil {
		if sw.started {
			return res, err
		}
		err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
		provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	if sw.keep {
		enc.keepStream(req.IncludeUsage, sw.kept)
	}
	return res, nil
}

// keepLimit is the largest synthesized stream (in bytes) kept for the next
// request of its snapshot: small answers, the common case, are encoded once;
// larger ones are synthesized lazily every time rather than held in memory.
const keepLimit = 256 << 10

// streamWriter sends the status line before the first event (so that a body
// that cannot be streamed still gets an error status) and keeps a copy of
// the events while they stay under keepLimit.
type streamWriter struct {
	w       io.Writer
	start   func()
	started bool
	keep    bool
	size    int
	kept    chunks
}

func (sw *streamWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.started = true
		sw.start()
	}
	if sw.keep {
		sw.size += len(p)
		if sw.size > keepLimit {
			sw.keep, sw.kept = false, nil
		} else {
			sw.kept = append(sw.kept, bytes.Clone(p))
		}
	}
	return sw.w.Write(p)
}

// sleeper is o.Sleep, or a timer-based wait when it is nil.
func (o Options) sleeper() func(ctx context.Context, d time.Duration) error {
	if o.Sleep != nil {
		return o.Sleep
	}
	return sleepCtx
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
