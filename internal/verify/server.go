package verify

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/source"
)

// ReplayOptions configure a replay server.
type ReplayOptions struct {
	// Set is the checked set; only its valid snapshots are served. Callers
	// start a replay server only when the static checks passed.
	Set *check.SetResult
	// Entries are what replay keeps beside the set's snapshots: those the
	// static check compacted the set into (StaticOptions.Serve) when it did,
	// else nil (a full set: the server makes its own).
	Entries *replay.Entries
	// Display names the snapshot folder in reports.
	Display string
	// Root is the project root: an unmatched request's GitHub annotation
	// points at its source file when that file exists under Root ("" = never).
	Root string
	// Latency reproduces each snapshot's recorded latency_ms.
	Latency bool
	// MemoGeneration sizes the memo of requests that hit (replay.NewMemo;
	// 0 = the set's size within [replay.MemoGeneration,
	// 4×replay.MemoGeneration]; < 0 = no memo).
	MemoGeneration int
	// Logf, when set, receives one line per request (diagnostics).
	Logf func(format string, args ...any)
}

// ReplayServer answers LLM calls from the in-memory set: a hit gets the
// recorded response, a miss a 404 in the provider's error shape. It keeps
// what it saw for the report.
type ReplayServer struct {
	o       ReplayOptions
	ix      *replay.Index
	entries *replay.Entries // the encoded replies (and compact snapshots' data) of the set
	memo    *replay.Memo    // requests that hit, by replay.RequestDigest

	mu          sync.Mutex
	served      int
	exchanges   int              // of served: exchange routes (DESIGN §13.4)
	misses      map[string]*miss // by key, or by "METHOD PATH" for unsupported calls
	missOrder   []string
	synthesized map[string]bool
	failures    []string
	normalized  map[string]*result.NormalizedMatch // by snapshot Rel: hits that needed a key normalizer
}

type miss struct {
	req    *provider.Request // nil for an unsupported or unparsable call
	src    *source.Source
	count  int
	reason string
	p      provider.Name
	path   string
}

// NewReplayServer builds the server over o.Set.
func NewReplayServer(o ReplayOptions) *ReplayServer {
	ix := replay.NewIndex(o.Set)
	o.Set = nil // the index keeps what serving needs; the rest of the set (file list, manifest, findings) can go
	gen := o.MemoGeneration
	if gen == 0 {
		gen = memoGeneration(ix.Len())
	}
	entries := o.Entries
	if entries == nil {
		entries = replay.NewEntries("")
	}
	o.Entries = nil
	return &ReplayServer{o: o, ix: ix, entries: entries, memo: replay.NewMemo(gen), misses: map[string]*miss{}, synthesized: map[string]bool{}, normalized: map[string]*result.NormalizedMatch{}}
}

// memoGeneration is the default memo generation of a set of n snapshots:
// room for each snapshot's request once (a test suite run again against a
// running server replays warm), within [replay.MemoGeneration,
// 4×replay.MemoGeneration] — a few MB at most.
func memoGeneration(n int) int {
	return min(max(n, replay.MemoGeneration), 4*replay.MemoGeneration)
}

// Handler is the replay server. Whoever serves it wraps it in the shared
// safety rules: serve.Guard(h, allow, Refuse) (Host check, caps, no
// CONNECT).
func (s *ReplayServer) Handler() http.Handler { return s }

// Refuse answers a request refused by serve.Guard in its provider's error
// shape (serve.Guard's errBody for the replay server).
func Refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	provider.WriteStatusError(w, registry.ErrorFormat(r), status, "traceforge replay: "+msg)
}

func (s *ReplayServer) logf(format string, args ...any) {
	if s.o.Logf != nil {
		s.o.Logf(format, args...)
	}
}

// ServeHTTP answers one call.
func (s *ReplayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := bodyBufs.Get().(*[]byte)
	req, snap, err := s.lookup(r, buf)
	if err != nil {
		f := registry.ErrorFormat(r)
		p := f.Provider()
		status, reason := http.StatusNotFound, registry.UnknownPath(r.Method, r.URL.Path)
		switch {
		case errors.Is(err, provider.ErrTooLarge):
			status, reason = http.StatusRequestEntityTooLarge, fmt.Sprintf("%s %s: request body larger than %d bytes", r.Method, r.URL.Path, serve.MaxRequestBody)
		case errors.Is(err, provider.ErrBadRequest):
			status, reason = http.StatusBadRequest, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err)
		case !errors.Is(err, provider.ErrNotLLMCall):
			status, reason = http.StatusBadRequest, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err)
		}
		s.addMiss(r.Method+" "+r.URL.Path, &miss{reason: reason, p: p, path: r.URL.Path})
		s.logf("replay: %s %s → %d (%s)", r.Method, r.URL.Path, status, reason)
		provider.WriteStatusError(w, f, status, "traceforge replay: "+reason)
		return
	}
	if snap == nil {
		var src *source.Source
		if v := r.Header.Get("X-Traceforge-Source"); v != "" {
			if ps, err := source.Parse(v); err == nil {
				src = &ps
			}
		}
		s.addMiss(req.Key, &miss{req: req, src: src, p: req.Provider, path: r.URL.Path})
		s.logf("replay: %s %s → 404 (no snapshot for key %s)", r.Method, r.URL.Path, req.ID())
		provider.WriteMiss(w, req)
		return
	}
	res, err := s.entries.Respond(r.Context(), w, req, snap, replay.Options{Latency: s.o.Latency})
	// A hit keeps nothing of its body (misses do, for the report): the
	// buffer serves the next request.
	if raw := req.Raw; cap(raw) > 0 && cap(raw) <= maxPooledBody {
		req.Raw = nil
		*buf = raw[:0]
		bodyBufs.Put(buf)
	}
	s.mu.Lock()
	s.served++
	if provider.IsExchange(req.Format) {
		s.exchanges++
	}
	if len(req.KeyNormalizers) > 0 {
		nm := s.normalized[snap.Rel]
		if nm == nil {
			nm = &result.NormalizedMatch{Snapshot: s.o.Display + "/" + snap.Rel}
			s.normalized[snap.Rel] = nm
		}
		nm.Count++
		for _, n := range req.KeyNormalizers {
			if !slices.Contains(nm.Rules, n) {
				nm.Rules = append(nm.Rules, n)
			}
		}
	}
	if res.Synthesized {
		s.synthesized[snap.Rel] = true
	}
	if err != nil && r.Context().Err() == nil {
		s.failures = append(s.failures, fmt.Sprintf("%s/%s: %v", s.o.Display, snap.Rel, err))
	}
	s.mu.Unlock()
	if s.o.Logf == nil {
		return // the lines below would box their arguments for nothing
	}
	if len(req.KeyNormalizers) > 0 {
		s.logf("replay: %s %s → %s (matched via %s)", r.Method, r.URL.Path, snap.Rel, strings.Join(req.KeyNormalizers, ", "))
		return
	}
	s.logf("replay: %s %s → %s", r.Method, r.URL.Path, snap.Rel)
}

// lookup parses r and finds its snapshot (nil on a miss; the hit is
// counted). A request that hit before is found in the memo without being
// parsed again; its Request then has no Body (serving a hit needs none).
func (s *ReplayServer) lookup(r *http.Request, buf *[]byte) (*provider.Request, *check.Snapshot, error) {
	format, endpoint, ok := registry.RouteURL(r.Method, r.URL) // the one routing of this call
	if !ok {
		return s.lookupExchange(r, buf)
	}
	body, err := registry.ReadHTTPBodyInto(r, *buf)
	if err != nil {
		return nil, nil, err
	}
	if xf, xe, ok := registry.ExchangeByBody(format, r.Method, r.URL.Path, body); ok {
		req, err := registry.ParseExchange(xf, xe, r.URL, body) // a background response (DESIGN §13.4)
		if err != nil {
			return nil, nil, err
		}
		return req, s.ix.LookupRequest(req), nil
	}
	var digest [32]byte
	if s.memo != nil {
		digest = replay.RequestDigest(r.Method, r.URL.Path, r.Header, body)
		if req, snap := s.memo.Get(digest); snap != nil {
			req.Raw = body
			s.ix.Lookup(snap.Key) // counts the hit, like LookupRequest
			return req, snap, nil
		}
	}
	// The body's strings alias the buffer: ServeHTTP gives it back only
	// after a hit is answered, and a miss keeps it with its Request.
	req, err := registry.ParseRoutedAliasing(format, endpoint, r.URL.Path, r.Header, body, s.ix.KeyContext())
	if err != nil {
		return nil, nil, err
	}
	snap := s.ix.LookupRequest(req)
	if snap != nil && s.memo != nil && !s.ix.Occurs(req.Key) {
		s.memo.Put(digest, req, snap)
	}
	return req, snap, nil
}

// lookupExchange parses a call to one of a provider's exchange routes
// (DESIGN §13.4) and finds its snapshot: identical requests get the
// recorded occurrences in order. A call no exchange route matches wraps
// provider.ErrNotLLMCall.
func (s *ReplayServer) lookupExchange(r *http.Request, buf *[]byte) (*provider.Request, *check.Snapshot, error) {
	format, endpoint, ok := registry.RouteExchange(r)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s %s", provider.ErrNotLLMCall, r.Method, r.URL.Path)
	}
	body, err := registry.ReadHTTPBodyInto(r, *buf)
	if err != nil {
		return nil, nil, err
	}
	req, err := registry.ParseExchange(format, endpoint, r.URL, body)
	if err != nil {
		return nil, nil, err
	}
	return req, s.ix.LookupRequest(req), nil
}

// bodyBufs holds request body buffers for reuse (ServeHTTP): up to
// maxPooledBody, so a rare large request does not stay pinned.
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBody = 256 << 10

func (s *ReplayServer) addMiss(k string, m *miss) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.misses[k]; ok {
		old.count++
		if old.src == nil {
			old.src = m.src
		}
		return
	}
	m.count = 1
	s.misses[k] = m
	s.missOrder = append(s.missOrder, k)
}

// Served is the number of calls answered from a snapshot so far.
func (s *ReplayServer) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// Finish returns what the server saw: unmatched calls with the diff
// against the closest snapshot, unused snapshots, the count of replayed
// calls, synthesized replies and replay failures.
func (s *ReplayServer) Finish() result.Replayed {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := result.Replayed{Served: s.served, Exchanges: s.exchanges}
	near := NewNearest(s.ix.Snapshots(), s.entries)
	for _, k := range s.missOrder {
		m := s.misses[k]
		out := result.Miss{Provider: string(m.p), Count: m.count, Reason: m.reason, Path: m.path}
		if m.src != nil {
			out.Source = m.src.Display()
			if existsIn(s.o.Root, m.src.File) {
				out.AnnotateFile, out.AnnotateLine = m.src.File, m.src.Line
			}
		}
		if m.req != nil {
			out.Endpoint = string(m.req.Endpoint)
			out.Key = m.req.Key
			if cands := near.Find(m.req, m.src, NearestCount); len(cands) > 0 {
				out.Closest = s.o.Display + "/" + cands[0].Snapshot.Rel
				out.Near, out.Diff = explain(s.o.Display, cands, m.req, s.ix.KeyContext(), s.entries)
			}
		}
		rep.Misses = append(rep.Misses, out)
	}
	for _, u := range s.ix.Unused() {
		rep.Unused = append(rep.Unused, s.o.Display+"/"+u.Rel)
	}
	for rel := range s.synthesized {
		rep.Synthesized = append(rep.Synthesized, s.o.Display+"/"+rel)
	}
	sort.Strings(rep.Synthesized)
	for _, nm := range s.normalized {
		rep.Normalized = append(rep.Normalized, *nm)
	}
	sort.Slice(rep.Normalized, func(i, j int) bool { return rep.Normalized[i].Snapshot < rep.Normalized[j].Snapshot })
	rep.ReplayErrors = append(rep.ReplayErrors, s.failures...)
	return rep
}

// existsIn reports whether the project-relative, slash-separated file (a
// request's source) is a regular file under root.
func existsIn(root, file string) bool {
	if root == "" || file == "" || path.IsAbs(file) || strings.Contains(file, "\\") {
		return false
	}
	for _, seg := range strings.Split(file, "/") {
		if seg == ".." {
			return false
		}
	}
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(file)))
	return err == nil && fi.Mode().IsRegular()
}
