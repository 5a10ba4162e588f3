package replay

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// Index is a checked set indexed by full request key. It counts hits, so
// that the snapshots never requested can be listed. Safe for concurrent use.
type Index struct {
	byKey  map[[32]byte]int32 // full key's digest (keyDigest) → position in all: no pointers for the collector to follow
	all    []*check.Snapshot
	hits   []atomic.Int64               // by position in all
	chains map[string]check.ChainParent // stored response body id → snapshot
	kc     *provider.KeyContext         // KeyContext, built once: it is asked for on every request
	// occ are the requests recorded as several occurrences (exchange.go),
	// served in order; occMu guards their counters.
	occ   occurrences
	occMu sync.Mutex
}

// NewIndex indexes the valid snapshots of set (check.SetResult.ByKey).
func NewIndex(set *check.SetResult) *Index {
	ix := &Index{byKey: map[[32]byte]int32{}, chains: map[string]check.ChainParent{}}
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
			if id, p, ok := check.ChainParentOf(s); ok {
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
	ix.indexOccurrences()
	return ix
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
	if ix.Occurs(req.Key) {
		return ix.nextOccurrence(req.Key) // recorded in turn: replayed in turn (DESIGN §13.4)
	}
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
