package replay

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// respondBytes is what e.Respond writes for req from s: status, the headers
// replay sets, and the body.
func respondBytes(t *testing.T, e *Entries, req *provider.Request, s *check.Snapshot) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	if _, err := e.Respond(context.Background(), rec, req, s, Options{}); err != nil {
		t.Fatal(err)
	}
	return rec.Code, rec.Header(), rec.Body.String()
}

// A compact snapshot (what a served set keeps) answers byte for byte like
// the full one — stored and synthesized bodies, plain and streamed, with
// and without the usage chunk, a stream too large to keep included — and
// holds neither the request nor the response's decoded values.
func TestCompactRespondsLikeFull(t *testing.T) {
	items := []snapshottest.Item{
		withBody(snapshottest.OpenAIChat("stored body")),
		snapshottest.OpenAIChat("synthesized body"),
		withBody(snapshottest.AnthropicMessage("stored body")),
		snapshottest.AnthropicMessage("synthesized body"),
	}
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	full, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil || !full.Valid() {
		t.Fatalf("full set: %v %v", err, full.Findings)
	}
	e := NewEntries(dir)
	served, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Trim: func(s *check.Snapshot) *check.Snapshot {
		return e.Compact(s, []uint64{7})
	}}, nil)
	if err != nil || !served.Valid() {
		t.Fatalf("served set: %v %v", err, served.Findings)
	}
	fix, cix := NewIndex(full), NewIndex(served)
	for _, it := range items {
		path, h := "/v1/chat/completions", http.Header{}
		if it.Provider == "anthropic" {
			path = "/v1/messages"
			h.Set("anthropic-version", "2023-06-01")
		}
		for _, extra := range []map[string]any{nil, {"stream": true}, {"stream": true, "stream_options": map[string]any{"include_usage": true}}} {
			req, err := registry.Parse("POST", path, h, reqBody(t, it, extra))
			if err != nil {
				t.Fatal(err)
			}
			fs, cs := fix.Lookup(req.Key), cix.Lookup(req.Key)
			if fs == nil || cs == nil {
				t.Fatalf("%s %v: miss (full %v, compact %v)", it.Response.Content, extra, fs != nil, cs != nil)
			}
			// Twice: the first compact reply builds the kept stream.
			for range 2 {
				fc, fh, fb := respondBytes(t, e, req, fs)
				cc, ch, cb := respondBytes(t, e, req, cs)
				if fc != cc || fb != cb || !reflect.DeepEqual(fh, ch) {
					t.Fatalf("%s/%s %v: compact reply differs\nfull    %d %v %q\ncompact %d %v %q", it.Provider, it.Response.Content, extra, fc, fh, fb, cc, ch, cb)
				}
			}
		}
	}
	for _, s := range cix.Snapshots() {
		r := s.Record
		if !e.IsCompact(s) || r.Raw != nil || r.Response.Body != nil || r.Response.Content != "" || len(r.Request) != 1 || r.Request["model"] == nil {
			t.Errorf("%s keeps more than serving needs: %+v", s.Rel, r)
		}
		// Its header values were built by Compact (the replies above
		// matched the full snapshot's headers) and serving builds none.
		if enc := e.lookup(s); enc.fixed != fixedID|fixedLength|fixedStream || enc.headers.Load() != nil ||
			testing.AllocsPerRun(10, func() { enc.headerValues(s, enc.body); enc.headerValues(s, nil) }) != 0 {
			t.Errorf("%s: header values not built once by Compact", s.Rel)
		}
		if fp, ok := e.Fingerprint(s); !ok || !reflect.DeepEqual(fp, []uint64{7}) {
			t.Errorf("%s fingerprint %v %v", s.Rel, fp, ok)
		}
		fs := fix.Get(s.Key)
		// The metadata (its strings packed into one allocation) is the full
		// snapshot's.
		meta := func(s *check.Snapshot) []any {
			r := s.Record
			return []any{s.Rel, s.Provider, s.ID, s.ParentID, s.Turn, s.Key, s.FileHash, s.ResponseID, s.ChainedFrom,
				r.Provider, r.ID, r.Timestamp, r.Source, r.Endpoint, r.ParentID, r.Turn, r.Hash, r.Response.LatencyMS, r.Response.Stream}
		}
		if got, want := meta(s), meta(fs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s metadata\n got %q\nwant %q", s.Rel, got, want)
		}
		wantBody, wantSynth, _ := e.Body(fs)
		gotBody, gotSynth, err := e.Body(s)
		if err != nil || gotSynth != wantSynth || !reflect.DeepEqual(gotBody, wantBody) {
			t.Errorf("%s Body: %v %v, want synthesized %v", s.Rel, err, gotSynth, wantSynth)
		}
		rec, err := e.FullRecord(s)
		if err != nil || !reflect.DeepEqual(rec, fs.Record) {
			t.Errorf("%s FullRecord: %v\n got %+v\nwant %+v", s.Rel, err, rec, fs.Record)
		}
		if !reflect.DeepEqual(r.RequestHeaders, fs.Record.RequestHeaders) || r.Request["model"] != fs.Record.Request["model"] {
			t.Errorf("%s: headers %v model %v, want %v %v", s.Rel, r.RequestHeaders, r.Request["model"], fs.Record.RequestHeaders, fs.Record.Request["model"])
		}
		if e.IsCompact(fs) {
			t.Errorf("%s: a full snapshot reports compact", fs.Rel)
		}
		// A copy of a compact snapshot sharing its record is served like it;
		// one given another record is not: the encoded reply belongs to the
		// record it was made from.
		if cp := *s; !e.IsCompact(&cp) {
			t.Errorf("%s: a copy sharing the compact record does not report compact", s.Rel)
		}
		if cp := *s; func() bool { cp.Record = fs.Record; return e.IsCompact(&cp) }() {
			t.Errorf("%s: a copy with another record reports compact", s.Rel)
		}
		if _, ok := e.Fingerprint(fs); ok {
			t.Errorf("%s: a full snapshot has a fingerprint", fs.Rel)
		}
	}
	// Equal small maps are kept once across the set.
	var models, headers = map[string]bool{}, map[uintptr]bool{}
	for _, s := range cix.Snapshots() {
		models[fmt.Sprintf("%p", s.Record.Request)] = true
		if s.Provider == "anthropic" {
			headers[reflect.ValueOf(s.Record.RequestHeaders).Pointer()] = true
		}
	}
	if len(models) != 2 || len(headers) != 1 {
		t.Errorf("shared maps: %d request maps for 2 models, %d header maps for 1 set of headers", len(models), len(headers))
	}
	// A file rewritten after the set was checked is not passed off as the
	// served snapshot.
	s := cix.Snapshots()[0]
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(s.Rel)), []byte(`{"version":"1.1.0","snapshots":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.FullRecord(s); err == nil || !strings.Contains(err.Error(), s.Rel) {
		t.Fatalf("FullRecord of a rewritten file: %v", err)
	}
}

// A compact snapshot whose stream is too large to keep re-decodes its body
// for every streamed reply, and the reply is the full snapshot's.
func TestCompactLargeStream(t *testing.T) {
	big := bigAnswer(keepLimit * 2)
	e := NewEntries(t.TempDir())
	c := e.Compact(big, nil)
	for _, stream := range []bool{false, true} {
		req := bigRequest(t, big, stream)
		for range 2 {
			fc, fh, fb := respondBytes(t, e, req, big)
			cc, ch, cb := respondBytes(t, e, req, c)
			if fc != cc || fb != cb || !reflect.DeepEqual(fh, ch) {
				t.Fatalf("stream=%v: compact reply differs (%d vs %d bytes)", stream, len(fb), len(cb))
			}
		}
	}
	if got := e.entry(c).cachedStream(false); got != nil {
		t.Fatalf("a %d-byte stream was kept", keepLimit*2)
	}
}

// TestKeyDigest: the index is keyed by the 32 bytes a key spells; only a
// key of 64 lowercase hex digits spells any, so lookups match exactly the
// strings they matched when the index was keyed by the string.
func TestKeyDigest(t *testing.T) {
	key := strings.Repeat("0123456789abcdef", 4)
	d, ok := keyDigest(key)
	if !ok || fmt.Sprintf("%x", d) != key {
		t.Fatalf("keyDigest(%s) = %x, %v", key, d, ok)
	}
	for _, bad := range []string{"", key[:63], key + "0", strings.ToUpper(key), key[:62] + "g0", key[:63] + " "} {
		if _, ok := keyDigest(bad); ok {
			t.Errorf("keyDigest(%q) accepted", bad)
		}
	}
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.OpenAIChat("a"), snapshottest.OpenAIChat("b")); err != nil {
		t.Fatal(err)
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil || !set.Valid() {
		t.Fatalf("%v %v", err, set.Findings)
	}
	ix := NewIndex(set)
	for _, s := range set.Snapshots {
		if ix.Get(s.Key) != s || ix.Get(strings.ToUpper(s.Key)) != nil || ix.Lookup(s.Key) != s || ix.Hits(s.Key) != 1 {
			t.Errorf("%s: Get/Lookup/Hits by key", s.Rel)
		}
	}
	if ix.Get(key) != nil || ix.Lookup(key) != nil || ix.Hits(key) != 0 {
		t.Errorf("an absent key was found")
	}
}
