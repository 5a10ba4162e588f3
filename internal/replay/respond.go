package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"
	"weak"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// HeaderSnapshotID names the snapshot that answered (DESIGN §6).
const HeaderSnapshotID = "X-Traceforge-Snapshot-Id"

// HeaderSynthesized is "true" on replies synthesized for a snapshot without
// a stored body.
const HeaderSynthesized = "X-Traceforge-Synthesized"

// Index is a checked set indexed by full request key. It counts hits, so
// that the snapshots never requested can be listed. Safe for concurrent use.
type Index struct {
	byKey map[string]*check.Snapshot
	all   []*check.Snapshot

	mu   sync.Mutex
	hits map[string]int
}

// NewIndex indexes the valid snapshots of set (check.SetResult.ByKey).
func NewIndex(set *check.SetResult) *Index {
	ix := &Index{byKey: map[string]*check.Snapshot{}, hits: map[string]int{}}
	if set == nil {
		return ix
	}
	ix.byKey = set.ByKey()
	for _, s := range set.Snapshots {
		if ix.byKey[s.Key] == s {
			ix.all = append(ix.all, s)
		}
	}
	sort.Slice(ix.all, func(i, j int) bool { return ix.all[i].Rel < ix.all[j].Rel })
	return ix
}

// Len is the number of snapshots indexed.
func (ix *Index) Len() int { return len(ix.all) }

// Snapshots returns the indexed snapshots sorted by Rel.
func (ix *Index) Snapshots() []*check.Snapshot { return ix.all }

// Get returns the snapshot of key without counting a hit.
func (ix *Index) Get(key string) *check.Snapshot { return ix.byKey[key] }

// Lookup returns the snapshot of key and counts a hit; nil on a miss.
func (ix *Index) Lookup(key string) *check.Snapshot {
	s := ix.byKey[key]
	if s != nil {
		ix.mu.Lock()
		ix.hits[key]++
		ix.mu.Unlock()
	}
	return s
}

// LookupRequest finds the snapshot of req and counts a hit; nil on a miss.
// A snapshot that stores no request_headers (only migrated 0.9.0 snapshots:
// that format never kept them) also matches a request whose key differs
// only by its anthropic-version/anthropic-beta headers — every Anthropic SDK
// sends them, so such snapshots could never replay otherwise.
func (ix *Index) LookupRequest(req *Request) *check.Snapshot {
	if s := ix.Lookup(req.Key); s != nil || len(req.Headers) == 0 {
		return s
	}
	key, err := snapshot.RequestKey(string(req.Provider), req.Body, nil)
	if err != nil {
		return nil
	}
	if s := ix.byKey[key]; s != nil && len(s.Record.RequestHeaders) == 0 {
		return ix.Lookup(key)
	}
	return nil
}

// Hits returns how often key was looked up successfully.
func (ix *Index) Hits(key string) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.hits[key]
}

// Unused returns the snapshots never looked up, sorted by Rel.
func (ix *Index) Unused() []*check.Snapshot {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []*check.Snapshot
	for _, s := range ix.all {
		if ix.hits[s.Key] == 0 {
			out = append(out, s)
		}
	}
	return out
}

// Endpoint is the endpoint of a snapshot, derived from its record.
func Endpoint(s *check.Snapshot) provider.Endpoint {
	return provider.Endpoint(snapshot.Endpoint(s.Provider, s.Record.Request))
}

// Body returns the response body replay sends for s: the stored
// response.body, or, for a snapshot without one (migrated from 0.9.0), a body
// synthesized from the normalized fields with provider.SynthesizeBody
// (synthesized = true). The result must not be modified.
func Body(s *check.Snapshot) (body map[string]any, synthesized bool, err error) {
	rec := s.Record
	if rec.Response.Body != nil {
		return rec.Response.Body, false, nil
	}
	at, err := time.Parse(time.RFC3339, rec.Timestamp)
	if err != nil {
		return nil, true, fmt.Errorf("snapshot %s: timestamp %q: %w", s.Rel, rec.Timestamp, err)
	}
	model, _ := rec.Request["model"].(string)
	return provider.SynthesizeBody(provider.Name(s.Provider), Endpoint(s), rec.ID, at, model, Fields(s)), true, nil
}

// Fields returns the recorded normalized response fields of s.
func Fields(s *check.Snapshot) snapshot.Fields {
	r := s.Record.Response
	return snapshot.Fields{
		Content:      r.Content,
		TokensUsed:   r.TokensUsed,
		FinishReason: r.FinishReason,
		ToolCalls:    r.ToolCalls,
		Usage:        r.Usage,
		Model:        r.Model,
	}
}

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
// provider-correct SSE stream (provider.SynthesizeStream; the usage chunk
// only when the request asked stream_options.include_usage). Every reply
// carries X-Traceforge-Snapshot-Id; synthesized replies also carry
// X-Traceforge-Synthesized: true. A snapshot whose body cannot be replayed
// gets a 500 in the provider's error shape with x-should-retry: false, and
// the error is returned.
func Respond(ctx context.Context, w http.ResponseWriter, req *Request, s *check.Snapshot, o Options) (Result, error) {
	res := Result{Streamed: req.Stream}
	body, synth, err := Body(s)
	res.Synthesized = synth
	if err != nil {
		WriteError(w, provider.Name(s.Provider), http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	p := provider.Name(s.Provider)
	var payload []byte
	var events chunks
	if req.Stream {
		events, err = encodedOf(s).stream(s, body, req.IncludeUsage)
	} else {
		payload, err = encodedOf(s).json(body)
	}
	if err != nil {
		err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
		WriteError(w, p, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	if o.Latency && s.Record.Response.LatencyMS > 0 {
		sleep := o.Sleep
		if sleep == nil {
			sleep = sleepCtx
		}
		if err := sleep(ctx, time.Duration(s.Record.Response.LatencyMS)*time.Millisecond); err != nil {
			return res, err
		}
	}
	h := w.Header()
	h.Set(HeaderSnapshotID, s.Record.ID)
	if synth {
		h.Set(HeaderSynthesized, "true")
	}
	if !req.Stream {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(payload)))
		w.WriteHeader(http.StatusOK)
		_, err = w.Write(payload)
		return res, err
	}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	// One write and flush per event, as the provider sends them.
	flusher, _ := w.(http.Flusher)
	for _, ev := range events {
		if _, err := w.Write(ev); err != nil {
			return res, err
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	return res, nil
}

// encoded caches the bytes Respond sends for one snapshot: they depend on
// the snapshot and the request's stream/include_usage flags only, and
// encoding them (above all synthesizing a stream) costs far more than
// serving them. Entries go away with their snapshot.
type encoded struct {
	jsonOnce sync.Once
	body     []byte
	jsonErr  error

	streamOnce [2]sync.Once // without, with the usage chunk
	events     [2]chunks
	streamErr  [2]error
}

var encodedCache sync.Map // weak.Pointer[check.Snapshot] → *encoded

func encodedOf(s *check.Snapshot) *encoded {
	k := weak.Make(s)
	if v, ok := encodedCache.Load(k); ok {
		return v.(*encoded)
	}
	v, loaded := encodedCache.LoadOrStore(k, &encoded{})
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[check.Snapshot]) { encodedCache.Delete(k) }, k)
	}
	return v.(*encoded)
}

// json is the body as JSON (one line, LF-terminated).
func (c *encoded) json(body map[string]any) ([]byte, error) {
	c.jsonOnce.Do(func() {
		var b bytes.Buffer
		c.jsonErr = writeJSON(&b, body)
		c.body = b.Bytes()
	})
	return c.body, c.jsonErr
}

// stream is the provider's SSE events for body. The events must not be modified.
func (c *encoded) stream(s *check.Snapshot, body map[string]any, includeUsage bool) (chunks, error) {
	i := 0
	if includeUsage {
		i = 1
	}
	c.streamOnce[i].Do(func() {
		c.streamErr[i] = provider.SynthesizeStream(provider.Name(s.Provider), Endpoint(s), body, includeUsage, &c.events[i], nil)
	})
	return c.events[i], c.streamErr[i]
}

// chunks keeps every Write as one event (SynthesizeStream writes one event
// per call).
type chunks [][]byte

func (c *chunks) Write(p []byte) (int, error) {
	*c = append(*c, bytes.Clone(p))
	return len(p), nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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

// WriteError writes a provider-shaped error (provider.ErrorBody) with
// status and x-should-retry: false, so the official SDKs do not retry it.
// code is OpenAI's error code ("" = null).
func WriteError(w http.ResponseWriter, p provider.Name, status int, typ, code, message string) {
	body := provider.ErrorBody(p, typ, code, message)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("x-should-retry", "false")
	h.Set("Content-Length", fmt.Sprint(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// ErrTooLarge: the request body exceeds serve.MaxRequestBody (answer 413).
var ErrTooLarge = errors.New("request body too large")

// MissStatus is the status of a replay miss: 404, which the official SDKs
// never retry.
const MissStatus = http.StatusNotFound

// WriteMiss answers a request that matches no snapshot: 404 in the
// provider's error shape with x-should-retry: false, naming the request key
// and how to record it.
func WriteMiss(w http.ResponseWriter, req *Request) {
	msg := fmt.Sprintf("traceforge replay: no snapshot matches this %s %s request (key %s, id %s). "+
		"The request differs from every recorded one (drift); the verify report shows the diff against the closest snapshot. "+
		"If the change is intended, record it: traceforge record --only-missing -- <your command>, then commit the snapshot folder.",
		req.Provider, req.Endpoint, req.Key, req.ID())
	typ, code := "invalid_request_error", "traceforge_snapshot_not_found"
	if req.Provider == provider.Anthropic {
		typ, code = "not_found_error", ""
	}
	WriteError(w, req.Provider, MissStatus, typ, code, msg)
}

// ErrorType returns the provider's error type for an HTTP status of a
// request traceforge refuses before lookup (bad JSON, too large, …).
func ErrorType(p provider.Name, status int) string {
	if p == provider.Anthropic {
		switch status {
		case http.StatusNotFound:
			return "not_found_error"
		case http.StatusForbidden:
			return "permission_error"
		case http.StatusRequestEntityTooLarge:
			return "request_too_large"
		case http.StatusInternalServerError:
			return "api_error"
		}
		return "invalid_request_error"
	}
	if status >= 500 {
		return "server_error"
	}
	return "invalid_request_error"
}

func readAll(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if serve.IsMaxBytes(err) {
			return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return b, nil
}
