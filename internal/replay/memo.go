package replay

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"net/http"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
)

// Memo remembers, for requests that hit, which snapshot answered them, so
// that the same request sent again (an application re-run against the same
// replay server, an SDK retry) is served without being decoded and keyed
// again. It is keyed by RequestDigest, which covers everything
// registry.Parse reads, and holds at most 2×generation entries: when the
// current generation is full it becomes the previous one and the one before
// is dropped (an entry used from the previous generation moves back to the
// current one). Misses are never memoized: they need the parsed body for
// the report. Safe for concurrent use.
type Memo struct {
	mu         sync.Mutex
	generation int
	cur, prev  map[[32]byte]memoEntry
}

// memoEntry is what serving a hit needs of its parsed request, held by
// value in the memo's maps.
type memoEntry struct {
	format         provider.Format
	provider       provider.Name
	endpoint       provider.Endpoint
	key            string
	keyNormalizers []string
	headers        map[string]any
	stream         bool
	includeUsage   bool
	snap           *check.Snapshot
}

// MemoGeneration is the size of a Memo generation NewMemo uses when given
// no size: 4,096 requests, at most 8,192 remembered (a few hundred bytes
// each).
const MemoGeneration = 4096

// NewMemo returns a memo of generation entries per generation (0:
// MemoGeneration); nil for a negative generation: the nil Memo remembers
// nothing.
func NewMemo(generation int) *Memo {
	if generation < 0 {
		return nil
	}
	if generation == 0 {
		generation = MemoGeneration
	}
	return &Memo{generation: generation, cur: map[[32]byte]memoEntry{}}
}

// RequestDigest identifies a request for a Memo: SHA-256 over its method,
// path, the stored request headers (provider.StoredHeaderNames, each value
// as sent) and body — every input of registry.Parse.
func RequestDigest(method, path string, h http.Header, body []byte) [32]byte {
	d := digests.Get().(hash.Hash)
	defer digests.Put(d)
	d.Reset()
	var n [8]byte
	field := func(s string) { // length-prefixed: no two inputs write the same bytes
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		_, _ = d.Write(n[:])
		_, _ = io.WriteString(d, s)
	}
	field(method)
	field(path)
	for _, name := range provider.StoredHeaderNames {
		vs := h.Values(name)
		binary.BigEndian.PutUint64(n[:], uint64(len(vs)))
		_, _ = d.Write(n[:])
		for _, v := range vs {
			field(v)
		}
	}
	_, _ = d.Write(body) // last: needs no length
	var sum [32]byte
	d.Sum(sum[:0])
	return sum
}

// digests are the SHA-256 states RequestDigest reuses.
var digests = sync.Pool{New: func() any { return sha256.New() }}

// Get returns the snapshot remembered for digest and a copy of the request
// parsed for it then, without Body and Raw; nil, nil when none.
func (m *Memo) Get(digest [32]byte) (*provider.Request, *check.Snapshot) {
	if m == nil {
		return nil, nil
	}
	m.mu.Lock()
	e, ok := m.cur[digest]
	if !ok {
		if e, ok = m.prev[digest]; ok {
			delete(m.prev, digest)
			m.putLocked(digest, e)
		}
	}
	m.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return &provider.Request{Format: e.format, Provider: e.provider, Endpoint: e.endpoint, Key: e.key,
		KeyNormalizers: e.keyNormalizers, Headers: e.headers, Stream: e.stream, IncludeUsage: e.includeUsage}, e.snap
}

// Put remembers that the request of digest, parsed as req, hit snap.
func (m *Memo) Put(digest [32]byte, req *provider.Request, snap *check.Snapshot) {
	if m == nil {
		return
	}
	e := memoEntry{format: req.Format, provider: req.Provider, endpoint: req.Endpoint, key: req.Key, keyNormalizers: req.KeyNormalizers,
		headers: req.Headers, stream: req.Stream, includeUsage: req.IncludeUsage, snap: snap}
	m.mu.Lock()
	m.putLocked(digest, e)
	m.mu.Unlock()
}

func (m *Memo) putLocked(digest [32]byte, e memoEntry) {
	if len(m.cur) >= m.generation {
		m.prev, m.cur = m.cur, make(map[[32]byte]memoEntry, m.generation)
	}
	m.cur[digest] = e
}

// Generation is the memo's generation size (0 for the nil Memo).
func (m *Memo) Generation() int {
	if m == nil {
		return 0
	}
	return m.generation
}

// Len is the number of requests remembered.
func (m *Memo) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.prev)
}
