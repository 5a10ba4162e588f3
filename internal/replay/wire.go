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
	"github.com/traceforge/traceforge/internal/snapshot"
)

// respondWire answers a streamed request from the stream's events as the
// provider sent them (response.wire, format 1.2.0, DESIGN §13.4): event for
// event, each data byte for byte, one write and flush per event; with
// Options.Latency at the recorded offsets. The usage the recording proxy
// asked for is stripped when the request does not ask for it, as the
// application saw the stream when it was recorded.
func (e *Entries) respondWire(ctx context.Context, w http.ResponseWriter, req *provider.Request, s *check.Snapshot, enc *encoded, o Options, errShape provider.Format) error {
	events := enc.cachedStream(req.IncludeUsage)
	var at []int64
	if events == nil || o.Latency {
		var err error
		events, at, err = wireChunks(format(s), s.Record.Response.Events, req.IncludeUsage)
		if err != nil {
			err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
			provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
			return err
		}
		if size(events) <= keepLimit {
			enc.keepStream(req.IncludeUsage, events)
		}
	}
	hv := enc.headerValues(s, nil)
	h := w.Header()
	h[provider.HeaderSnapshotID] = hv.id
	h["Content-Type"] = hv.stream
	h["Cache-Control"] = headerNoCache
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	sleep := o.sleeper()
	var last int64
	for i, ev := range events {
		if o.Latency {
			if d := at[i] - last; d > 0 {
				if err := sleep(ctx, time.Duration(d)*time.Millisecond); err != nil {
					return err
				}
			}
			last = max(last, at[i])
		}
		if _, err := w.Write(ev); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	return nil
}

// wireChunks encodes a stored stream in its format's framing, one chunk per
// event, with each chunk's offset; stripped of the usage chunk when the
// format's usage is asked for by option and the request does not ask
// (provider.UsageInjector): the recording proxy asked for it on the
// application's behalf.
func wireChunks(f provider.Format, ws *snapshot.WireStream, includeUsage bool) (chunks, []int64, error) {
	if f == nil {
		return nil, nil, fmt.Errorf("unknown wire format")
	}
	fr := provider.FramingOf(f).WithNewline(ws.Newline)
	if ws.Framing != fr.Name() {
		return nil, nil, fmt.Errorf("response.wire.framing is %q, but %s streams are %q", ws.Framing, f.Endpoint(), fr.Name())
	}
	var (
		out      chunks
		at       []int64
		stripped bytes.Buffer
		strip    io.WriteCloser
		scratch  []byte
	)
	if inj, ok := f.(provider.UsageInjector); ok && !includeUsage {
		strip = inj.NewUsageStripper(&stripped, nil)
	}
	take := func(ms int64) {
		if stripped.Len() > 0 {
			out, at = append(out, bytes.Clone(stripped.Bytes())), append(at, ms)
			stripped.Reset()
		}
	}
	for i := range ws.Events {
		ev := &ws.Events[i]
		b, err := fr.AppendEvent(scratch[:0], ev)
		if err != nil {
			return nil, nil, fmt.Errorf("response.wire.events[%d]: %w", i, err)
		}
		scratch = b
		if strip == nil {
			out, at = append(out, bytes.Clone(b)), append(at, ev.MS)
			continue
		}
		if _, err := strip.Write(b); err != nil {
			return nil, nil, fmt.Errorf("response.wire.events[%d]: %w", i, err)
		}
		take(ev.MS)
	}
	if strip != nil {
		if err := strip.Close(); err != nil {
			return nil, nil, fmt.Errorf("response.wire: %w", err)
		}
		if n := len(ws.Events); n > 0 {
			take(ws.Events[n-1].MS)
		}
	}
	return out, at, nil
}

// size is the number of bytes of c.
func size(c chunks) int {
	n := 0
	for _, b := range c {
		n += len(b)
	}
	return n
}
