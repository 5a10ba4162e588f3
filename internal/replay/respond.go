// Package replay answers LLM calls from a checked snapshot set: it indexes
// a set by request key (Index) and writes a snapshot's recorded response as
// JSON or as the wire format's stream (Respond). It is shared by `traceforge
// verify` (the replay server), `traceforge record --only-missing` (hits are
// served from the set without contacting the upstream) and the Go
// transport. Requests are parsed by the wire layer (registry.Parse).
//
// It never touches the network and never reads the snapshot folder itself:
// callers hand it the in-memory set validated by check.CheckSet.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Index is a checked set indexed by full request key. It counts hits, so
// that the snapshots never requested can be listed. Safe for concurrent use.
type Index struct {
	byKey  map[[32]byte]int32 // full key's digest (keyDigest) → position in all: no pointers for the collector to follow
	all    []*check.Snapshot
	hits   []atomic.Int64         // by position in all
	chains map[string]ChainParent // stored response body id → snapshot
	kc     *provider.KeyContext   // KeyContext, built once: it is asked for on every request
}

// NewIndex indexes the valid snapshots of set (check.SetResult.ByKey).
func NewIndex(set *check.SetResult) *Index {
	ix := &Index{byKey: map[[32]byte]int32{}, chains: map[string]ChainParent{}}
	ix.kc = &provider.KeyContext{Parent: func(responseID string) (string, int, bool) {
		p, ok := ix.chains[responseID]
		return p.ID, p.Turn, ok
	}}
	if set == nil {
		return ix
	}
	byKey := set.ByKey()
	if set.Keys != nil {
		ix.kc.Normalize = set.Keys.Normalize
		ix.kc.Defaults = set.Keys.Defaults
	}
	for _, s := range set.Snapshots {
		if byKey[s.Key] == s {
			ix.all = append(ix.all, s)
			if id, p, ok := ChainParentOf(s); ok {
				if old, seen := ix.chains[id]; !seen || p.ID < old.ID {
					ix.chains[id] = p
				}
			}
		}
	}
	sort.Slice(ix.all, func(i, j int) bool { return ix.all[i].Rel < ix.all[j].Rel })
	ix.byKey = make(map[[32]byte]int32, len(ix.all))
	for i, s := range ix.all {
		// A key is 64 lowercase hex digits (registry.RequestKey); one that
		// is not could never be looked up, and is not indexed.
		if d, ok := keyDigest(s.Key); ok {
			ix.byKey[d] = int32(i)
		}
	}
	ix.hits = make([]atomic.Int64, len(ix.all))
	return ix
}

// ChainParent is the snapshot that recorded a response id, and its lineage
// turn (1 without lineage).
type ChainParent struct {
	ID   string
	Turn int
}

// ChainParentOf returns the response id of a snapshot's stored body (the id
// a Responses request names in previous_response_id) and the snapshot as a
// chain parent; ok is false when the body has no string id.
func ChainParentOf(s *check.Snapshot) (responseID string, p ChainParent, ok bool) {
	if s == nil || s.Record == nil {
		return "", ChainParent{}, false
	}
	id := s.ResponseID // kept by Compact, which drops the body
	if id == "" {
		id, _ = s.Record.Response.Body["id"].(string)
	}
	if id == "" {
		return "", ChainParent{}, false
	}
	return id, ChainParent{ID: s.Record.ID, Turn: max(s.Record.Turn, 1)}, true
}

// KeyContext resolves a previous_response_id through the stored body ids of
// the set (replay maps stored body ids, DESIGN §12.9 item 5); several
// snapshots with the same body id: the smallest snapshot id. It carries the
// set's declared key normalizers, so requests key like the set. The
// context is shared: callers must not modify it.
func (ix *Index) KeyContext() *provider.KeyContext { return ix.kc }

// Len is the number of snapshots indexed.
func (ix *Index) Len() int { return len(ix.all) }

// Snapshots returns the indexed snapshots sorted by Rel.
func (ix *Index) Snapshots() []*check.Snapshot { return ix.all }

// keyDigest is the 32 bytes a full request key (64 lowercase hex digits)
// spells; ok is false for any other string.
func keyDigest(key string) (d [32]byte, ok bool) {
	if len(key) != 2*len(d) {
		return d, false
	}
	for i := range d {
		hi, ok1 := lowerHex(key[2*i])
		lo, ok2 := lowerHex(key[2*i+1])
		if !ok1 || !ok2 {
			return d, false
		}
		d[i] = hi<<4 | lo
	}
	return d, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// position returns the position in all of the snapshot of key.
func (ix *Index) position(key string) (int32, bool) {
	d, ok := keyDigest(key)
	if !ok {
		return 0, false
	}
	i, ok := ix.byKey[d]
	return i, ok
}

// Get returns the snapshot of key without counting a hit.
func (ix *Index) Get(key string) *check.Snapshot {
	if i, ok := ix.position(key); ok {
		return ix.all[i]
	}
	return nil
}

// Lookup returns the snapshot of key and counts a hit; nil on a miss.
func (ix *Index) Lookup(key string) *check.Snapshot {
	i, ok := ix.position(key)
	if !ok {
		return nil
	}
	ix.hits[i].Add(1)
	return ix.all[i]
}

// LookupRequest finds the snapshot of req and counts a hit; nil on a miss.
// A snapshot that stores no request_headers (only migrated 0.9.0 snapshots:
// that format never kept them) also matches a request whose key differs
// only by its anthropic-version/anthropic-beta headers — every Anthropic SDK
// sends them, so such snapshots could never replay otherwise.
func (ix *Index) LookupRequest(req *provider.Request) *check.Snapshot {
	if s := ix.Lookup(req.Key); s != nil || len(req.Headers) == 0 {
		return s
	}
	key, err := registry.RequestKey(string(req.Provider), req.Endpoint, req.Body, nil, ix.KeyContext())
	if err != nil {
		return nil
	}
	if s := ix.Get(key); s != nil && len(s.Record.RequestHeaders) == 0 {
		return ix.Lookup(key)
	}
	return nil
}

// Hits returns how often key was looked up successfully.
func (ix *Index) Hits(key string) int {
	if i, ok := ix.position(key); ok {
		return int(ix.hits[i].Load())
	}
	return 0
}

// Unused returns the snapshots never looked up, sorted by Rel.
func (ix *Index) Unused() []*check.Snapshot {
	var out []*check.Snapshot
	for i, s := range ix.all {
		if ix.hits[i].Load() == 0 {
			out = append(out, s)
		}
	}
	return out
}

// Body returns the response body replay sends for s: the stored
// response.body, or, for a snapshot without one (migrated from 0.9.0), a body
// synthesized from the normalized fields by its format (Format.SynthesizeBody)
// (synthesized = true). The result must not be modified.
func Body(s *check.Snapshot) (body map[string]any, synthesized bool, err error) {
	if enc := lookupEncoded(s); enc.compact {
		if enc.bodyErr != nil {
			return nil, enc.synth, enc.bodyErr
		}
		body, err = enc.decode()
		return body, enc.synth, err
	}
	rec := s.Record
	if rec.Response.Body != nil {
		return rec.Response.Body, false, nil
	}
	at, err := time.Parse(time.RFC3339, rec.Timestamp)
	if err != nil {
		return nil, true, fmt.Errorf("snapshot %s: timestamp %q: %w", s.Rel, rec.Timestamp, err)
	}
	model, _ := rec.Request["model"].(string)
	f := format(s)
	if f == nil {
		return nil, true, fmt.Errorf("snapshot %s: unknown provider %q", s.Rel, s.Provider)
	}
	body = f.SynthesizeBody(rec.ID, at, model, rec.Response.Fields)
	if body == nil {
		return nil, true, fmt.Errorf("snapshot %s: has no response body and its format cannot synthesize one", s.Rel)
	}
	return body, true, nil
}

// Compact returns what replay needs of a checked snapshot (check.Options.Trim
// for sets that are only served): the snapshot's metadata and a record
// holding its id, provider, endpoint, timestamp, source, lineage, request
// headers, latency and the request's model — no request, response fields,
// body or raw value — with the response body encoded once, as Respond sends
// it (a body-less snapshot's synthesized body, or the error that prevents
// one). fingerprint is kept for closeness (Fingerprint); dir is the snapshot
// folder FullRecord re-reads the file from. Respond answers a compact
// snapshot byte for byte like the full one.
func Compact(s *check.Snapshot, dir string, fingerprint []uint64) *check.Snapshot {
	if s == nil || s.Record == nil {
		return s
	}
	rec := s.Record
	cs := &compactSnapshot{snap: *s}
	c := &cs.snap
	cs.rec = snapshot.Record{Provider: rec.Provider, ID: rec.ID, Timestamp: rec.Timestamp, Source: rec.Source,
		Endpoint: rec.Endpoint, RequestHeaders: shared(rec.RequestHeaders), KeyNormalizers: rec.KeyNormalizers,
		Response: snapshot.Response{LatencyMS: rec.Response.LatencyMS, Stream: rec.Response.Stream},
		ParentID: rec.ParentID, Turn: rec.Turn, Hash: rec.Hash}
	c.Record = &cs.rec
	if m, ok := rec.Request["model"]; ok {
		c.Record.Request = shared(map[string]any{"model": m})
	}
	enc := &cs.enc
	enc.compact, enc.fingerprint, enc.dir, enc.rec = true, fingerprint, dir, &cs.rec
	c.Served = enc
	var body map[string]any
	body, enc.synth, enc.bodyErr = Body(s)
	if enc.bodyErr == nil {
		_, _ = enc.json(body) // the error is kept and returned by json
	}
	// The reply's header values (headerValues) live in the same object,
	// built now: serving allocates none, and a served set keeps no extra
	// objects per snapshot for the collector to mark.
	hv := &enc.headerVals
	hv[0], enc.fixed = cs.rec.ID, fixedID
	if enc.bodyErr == nil && enc.jsonErr == nil {
		hv[1], enc.fixed = strconv.Itoa(len(enc.body)), enc.fixed|fixedLength
	}
	if f := format(c); f != nil {
		hv[2], enc.fixed = f.StreamContentType(), enc.fixed|fixedStream
	}
	packStrings(&c.Rel, &c.Provider, &c.ID, &c.ParentID, &c.Key, &c.FileHash, &c.ResponseID, &c.ChainedFrom,
		&cs.rec.Provider, &cs.rec.ID, &cs.rec.Timestamp, &cs.rec.Source.File, &cs.rec.Source.Function,
		&cs.rec.Endpoint, &cs.rec.ParentID, &cs.rec.Hash, &hv[0], &hv[1], &hv[2])
	return c
}

// packStrings makes the strings one snapshot keeps share one allocation
// (equal ones one copy): decoded, each was its own small object, and a
// served set keeps a dozen of them per snapshot for its whole life, each
// one more object for the collector to mark.
func packStrings(fields ...*string) {
	var b strings.Builder
	for i, f := range fields {
		if !slices.ContainsFunc(fields[:i], func(g *string) bool { return *g == *f }) {
			b.WriteString(*f)
		}
	}
	all, at := b.String(), 0
	for i, f := range fields {
		if j := slices.IndexFunc(fields[:i], func(g *string) bool { return *g == *f }); j >= 0 {
			*f = *fields[j] // already repointed into all
			continue
		}
		*f = all[at : at+len(*f)]
		at += len(*f)
	}
}

// compactSnapshot is what Compact allocates for one snapshot: the snapshot,
// its record and its encoded reply in one object, the record pointing into
// it. A served set thus costs the collector one object per snapshot, with
// no weak pointer or cleanup, and Respond finds the encoded reply without a
// lookup (Served, see compactOf).
type compactSnapshot struct {
	snap check.Snapshot // first: a *check.Snapshot from Compact points here
	rec  snapshot.Record
	enc  encoded
}

// compactOf returns the encoded reply of a snapshot made by Compact (its
// Served field points into the same object), nil for any other — and for a
// copy whose Record was replaced: the reply belongs to the record.
func compactOf(s *check.Snapshot) *encoded {
	if s == nil || s.Record == nil {
		return nil
	}
	if enc, ok := s.Served.(*encoded); ok && enc.rec == s.Record {
		return enc
	}
	return nil
}

// sharedMaps holds one copy of each small flat map compact snapshots keep
// (the request's model, the request headers): a set repeats a few of them
// across thousands of snapshots. The maps are read-only, like the records.
var sharedMaps sync.Map // canonical text → map[string]any

// shared returns the shared copy of m, a flat map of strings (JSON
// numbers included) — any other map is returned as it is.
func shared(m map[string]any) map[string]any {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		switch v.(type) {
		case string, json.Number:
		default:
			return m
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%q:%T:%q;", k, m[k], fmt.Sprint(m[k]))
	}
	v, _ := sharedMaps.LoadOrStore(b.String(), m)
	return v.(map[string]any)
}

// IsCompact reports whether s was made by Compact.
func IsCompact(s *check.Snapshot) bool { return lookupEncoded(s).compact }

// Fingerprint is the fingerprint Compact kept for s; ok is false for a
// snapshot that is not compact.
func Fingerprint(s *check.Snapshot) (fp []uint64, ok bool) {
	enc := lookupEncoded(s)
	return enc.fingerprint, enc.compact
}

// FullRecord returns the complete record of s: s.Record itself, or for a
// compact snapshot the record read again from its file (a miss explanation
// needs the full request of a few snapshots only).
func FullRecord(s *check.Snapshot) (*snapshot.Record, error) {
	enc := lookupEncoded(s)
	if !enc.compact {
		return s.Record, nil
	}
	data, err := (&snapshot.Store{Dir: enc.dir}).ReadRel(s.Rel, snapshot.MaxSnapshotFileSize)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", s.Rel, err)
	}
	rv, err := snapshot.FileRecord(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", s.Rel, err)
	}
	rec := snapshot.RecordFromValue(s.Provider, rv)
	if rec.ID != s.Record.ID || rec.Hash != s.Record.Hash {
		return nil, fmt.Errorf("snapshot %s: changed on disk since it was checked", s.Rel)
	}
	return rec, nil
}

// lookupEncoded is s's cache entry, a zero one when it has none.
func lookupEncoded(s *check.Snapshot) *encoded {
	if enc := compactOf(s); enc != nil {
		return enc
	}
	if v, ok := encodedCache.Load(weak.Make(s)); ok {
		return v.(*encoded)
	}
	return &encoded{}
}

// format is the wire format of a snapshot's record.
func format(s *check.Snapshot) provider.Format {
	return registry.Lookup(provider.Name(s.Provider), provider.Endpoint(s.Record.Endpoint))
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
// stream in the snapshot's wire format (Format.SynthesizeStream; the usage
// chunk only when the request asked for it, e.g.
// stream_options.include_usage). Every reply
// carries X-Traceforge-Snapshot-Id; synthesized replies also carry
// X-Traceforge-Synthesized: true. A snapshot whose body cannot be replayed
// gets a 500 in the provider's error shape with x-should-retry: false, and
// the error is returned.
func Respond(ctx context.Context, w http.ResponseWriter, req *provider.Request, s *check.Snapshot, o Options) (Result, error) {
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
	enc := encodedOf(s)
	var body map[string]any
	var synth bool
	var err error
	if enc.compact {
		synth, err = enc.synth, enc.bodyErr
	} else {
		body, synth, err = Body(s)
	}
	res.Synthesized = synth
	if err != nil {
		provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	var payload []byte
	if !req.Stream {
		if payload, err = enc.json(body); err != nil {
			err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
			provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
			return res, err
		}
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
	if enc.compact {
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

// encoded caches the bytes Respond sends for one snapshot: they depend on
// the snapshot and the request's stream/include_usage flags only, and
// encoding them (above all synthesizing a stream) costs far more than
// serving them. Streams are kept only up to keepLimit bytes. Entries go
// away with their snapshot.
type encoded struct {
	jsonOnce sync.Once
	body     []byte
	jsonErr  error

	streams [2]atomic.Pointer[chunks] // without, with the usage chunk
	headers atomic.Pointer[replyHeaders]

	// Set by Compact, whose snapshot has no body: body is encoded at load
	// (compact = true); synth and bodyErr are Body's results; fingerprint
	// and dir serve closeness (Fingerprint) and FullRecord.
	compact     bool
	rec         *snapshot.Record // the record the reply was encoded from
	synth       bool
	bodyErr     error
	fingerprint []uint64
	dir         string
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

// encodedCache holds the encoded replies of snapshots not made by Compact
// (full sets served as they are).
var encodedCache sync.Map // weak.Pointer[check.Snapshot] → *encoded

func encodedOf(s *check.Snapshot) *encoded {
	if enc := compactOf(s); enc != nil {
		return enc
	}
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
