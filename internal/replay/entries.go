package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Entries is what replay keeps beside the snapshots of one served set: per
// record, its entry — the bytes Respond sends (encoded), and for a
// snapshot made by Compact its closeness fingerprint — and one copy of each
// small map compact snapshots share. The caller that serves a set owns its
// Entries (the replay server, record --only-missing's Responder, the Go
// transport) and gives the same one to the check that trims the set
// (Compact) and to whatever answers from it; entries live as long as it
// does. Nothing is process-global.
//
// The nil *Entries holds nothing: every snapshot is full, and Respond
// encodes its reply for each request. Safe for concurrent use.
type Entries struct {
	dir string // the snapshot folder FullRecord reads a compact snapshot's file from

	mu sync.RWMutex
	// byRecord is keyed by the record an entry was encoded from: a copy of
	// a snapshot sharing its record shares its entry; one given another
	// record does not.
	byRecord map[*snapshot.Record]*encoded
	maps     map[string]map[string]any // canonical text → the shared copy (shared)
}

// NewEntries returns empty entries for a set in the snapshot folder dir
// ("" for a set that is never compacted).
func NewEntries(dir string) *Entries {
	return &Entries{dir: dir, byRecord: map[*snapshot.Record]*encoded{}, maps: map[string]map[string]any{}}
}

// lookup is s's entry, nil when it has none.
func (e *Entries) lookup(s *check.Snapshot) *encoded {
	if e == nil || s == nil || s.Record == nil {
		return nil
	}
	e.mu.RLock()
	enc := e.byRecord[s.Record]
	e.mu.RUnlock()
	return enc
}

// peek is s's entry, a zero one (full, nothing encoded) when it has none.
func (e *Entries) peek(s *check.Snapshot) *encoded {
	if enc := e.lookup(s); enc != nil {
		return enc
	}
	return &encoded{}
}

// entry is s's entry, made on first use for a full snapshot (one Compact
// did not make). Without entries (nil) it is a new one each time.
func (e *Entries) entry(s *check.Snapshot) *encoded {
	if enc := e.lookup(s); enc != nil {
		return enc
	}
	if e == nil || s == nil || s.Record == nil {
		return &encoded{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	enc := e.byRecord[s.Record]
	if enc == nil {
		enc = &encoded{}
		e.byRecord[s.Record] = enc
	}
	return enc
}

// Body returns the response body replay sends for s: the stored
// response.body, or, for a snapshot without one (migrated from 0.9.0), a body
// synthesized from the normalized fields by its format (Format.SynthesizeBody)
// (synthesized = true). The result must not be modified.
func (e *Entries) Body(s *check.Snapshot) (body map[string]any, synthesized bool, err error) {
	if enc := e.lookup(s); enc != nil && enc.compact {
		if enc.bodyErr != nil {
			return nil, enc.synth, enc.bodyErr
		}
		body, err = enc.decode()
		return body, enc.synth, err
	}
	return fullBody(s)
}

// fullBody is Body of a full snapshot (one that keeps its record).
func fullBody(s *check.Snapshot) (body map[string]any, synthesized bool, err error) {
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
// one), kept in e (which must not be nil). fingerprint is kept for closeness (Fingerprint); e's
// folder is where FullRecord re-reads the file from. e.Respond answers a
// compact snapshot byte for byte like the full one.
func (e *Entries) Compact(s *check.Snapshot, fingerprint []uint64) *check.Snapshot {
	if s == nil || s.Record == nil || provider.IsExchange(format(s)) {
		return s // an exchange is answered from its full record (respondExchange)
	}
	rec := s.Record
	cs := &compactSnapshot{snap: *s}
	c := &cs.snap
	cs.rec = snapshot.Record{Provider: rec.Provider, ID: rec.ID, Timestamp: rec.Timestamp, Source: rec.Source,
		Endpoint: rec.Endpoint, RequestHeaders: e.shared(rec.RequestHeaders), KeyNormalizers: rec.KeyNormalizers, Occurrence: rec.Occurrence,
		Response: snapshot.Response{LatencyMS: rec.Response.LatencyMS, Stream: rec.Response.Stream, Wire: rec.Response.Wire, Events: rec.Response.Events},
		ParentID: rec.ParentID, Turn: rec.Turn, Hash: rec.Hash}
	c.Record = &cs.rec
	if m, ok := rec.Request["model"]; ok {
		c.Record.Request = e.shared(map[string]any{"model": m})
	}
	enc := &cs.enc
	enc.compact, enc.fingerprint = true, fingerprint
	var body map[string]any
	body, enc.synth, enc.bodyErr = fullBody(s)
	if rec.Response.Wire != "" {
		enc.wireJSON(rec.Response.Wire) // the JSON reply is the stored text
	} else if enc.bodyErr == nil {
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
	e.mu.Lock()
	e.byRecord[c.Record] = enc
	e.mu.Unlock()
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
// it. A served set thus costs the collector one object per snapshot (and
// one map slot in its Entries), with no weak pointer or cleanup.
type compactSnapshot struct {
	snap check.Snapshot // first: a *check.Snapshot from Compact points here
	rec  snapshot.Record
	enc  encoded
}

// shared returns the shared copy of m, a flat map of strings (JSON
// numbers included) — any other map is returned as it is. Compact
// snapshots keep one copy of each (the request's model, the request
// headers): a set repeats a few of them across thousands of snapshots. The
// maps are read-only, like the records.
func (e *Entries) shared(m map[string]any) map[string]any {
	if e == nil || len(m) == 0 {
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
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.maps[b.String()]; ok {
		return v
	}
	e.maps[b.String()] = m
	return m
}

// IsCompact reports whether s was made by e.Compact.
func (e *Entries) IsCompact(s *check.Snapshot) bool { return e.peek(s).compact }

// Fingerprint is the fingerprint Compact kept for s; ok is false for a
// snapshot that is not compact.
func (e *Entries) Fingerprint(s *check.Snapshot) (fp []uint64, ok bool) {
	enc := e.peek(s)
	return enc.fingerprint, enc.compact
}

// FullRecord returns the complete record of s: s.Record itself, or for a
// compact snapshot the record read again from its file (a miss explanation
// needs the full request of a few snapshots only).
func (e *Entries) FullRecord(s *check.Snapshot) (*snapshot.Record, error) {
	if !e.peek(s).compact {
		return s.Record, nil
	}
	data, err := (&snapshot.Store{Dir: e.dir}).ReadRel(s.Rel, snapshot.MaxSnapshotFileSize)
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
	if rec.Response.Body == nil && rec.Response.Events != nil {
		// A stream stored as its events has no body (check.CheckDocument).
		if rec.Response.Body, err = provider.AssembleWire(format(s), rec.Response.Events); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", s.Rel, err)
		}
	}
	return rec, nil
}

// format is the wire format of a snapshot's record.
func format(s *check.Snapshot) provider.Format {
	return registry.Lookup(provider.Name(s.Provider), provider.Endpoint(s.Record.Endpoint))
}
