package verify

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// keyDocument is what a drift diff compares: the key object (provider,
// endpoint, request with the key-only normalization and the declared key
// normalizers, headers), so the diff shows exactly what made the keys
// differ and nothing the key ignores (stream flags, provider-generated
// tool-call ids, volatile values a rule rewrites).
func keyDocument(p string, e provider.Endpoint, request, headers map[string]any, kc *provider.KeyContext) map[string]any {
	obj, err := registry.KeyObject(p, e, request, headers, kc)
	if err != nil {
		return nil
	}
	return obj
}

func pretty(v any) string {
	if v == nil {
		return ""
	}
	b, err := snapshot.MarshalPretty(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// NearestCount is how many close snapshots an unmatched request is shown
// with (DESIGN §12.4).
const NearestCount = 3

// Candidate is a snapshot close to an unmatched request.
type Candidate struct {
	Snapshot *check.Snapshot
	// SameSource and SameModel are the first two closeness tiers: the
	// request came from the snapshot's source; same model and endpoint.
	SameSource, SameModel bool
	// Similarity is the structural similarity of the two requests in
	// [0, 1]: the Jaccard index of their leaf features (pointer, and
	// pointer plus value).
	Similarity float64
}

// Nearest ranks the snapshots of a set by closeness to unmatched requests.
// It computes each snapshot's features once, so that every miss costs one
// pass of set intersections: fast on large sets (BenchmarkNearest).
type Nearest struct {
	snaps   []*check.Snapshot
	entries *replay.Entries // where compact snapshots keep their fingerprints (nil: none are compact)
	once    sync.Once
	feats   [][]uint64 // sorted, deduplicated features per snapshot
	model   []string
}

// NewNearest prepares snaps (the checked set's valid snapshots); entries
// are the set's replay entries (nil when the set is not compact).
func NewNearest(snaps []*check.Snapshot, entries *replay.Entries) *Nearest {
	return &Nearest{snaps: snaps, entries: entries}
}

func (n *Nearest) prepare() {
	n.once.Do(func() {
		n.feats = make([][]uint64, len(n.snaps))
		n.model = make([]string, len(n.snaps))
		for i, s := range n.snaps {
			if s.Record == nil {
				continue
			}
			if fp, ok := n.entries.Fingerprint(s); ok {
				n.feats[i] = fp
			} else {
				n.feats[i] = features(s.Record.Request)
			}
			n.model[i], _ = s.Record.Request["model"].(string)
		}
	})
}

// Find returns up to k snapshots of req's provider closest to req, best
// first: same source first (src may be nil: the request carried no
// X-Traceforge-Source), then same model and endpoint, then the highest
// structural similarity; ties go to the first by file name.
func (n *Nearest) Find(req *provider.Request, src *source.Source, k int) []Candidate {
	n.prepare()
	model, _ := req.Body["model"].(string)
	rf := features(req.Body)
	var out []Candidate
	for i, s := range n.snaps {
		if s.Provider != string(req.Provider) || s.Record == nil {
			continue
		}
		c := Candidate{Snapshot: s,
			SameSource: src != nil && s.Record.Source == *src,
			SameModel:  n.model[i] == model && provider.Endpoint(s.Record.Endpoint) == req.Endpoint,
		}
		c.Similarity = jaccard(rf, n.feats[i])
		if len(out) == k && !better(c, out[k-1]) {
			continue
		}
		at, _ := slices.BinarySearchFunc(out, c, func(a, b Candidate) int {
			if better(b, a) {
				return 1
			}
			return -1
		})
		out = slices.Insert(out, at, c)
		if len(out) > k {
			out = out[:k]
		}
	}
	return out
}

// better reports whether a ranks before b.
func better(a, b Candidate) bool {
	if ta, tb := tier(a), tier(b); ta != tb {
		return ta > tb
	}
	if a.Similarity != b.Similarity {
		return a.Similarity > b.Similarity
	}
	return a.Snapshot.Rel < b.Snapshot.Rel
}

func tier(c Candidate) int {
	t := 0
	if c.SameSource {
		t += 2
	}
	if c.SameModel {
		t++
	}
	return t
}

// Closest returns the snapshot of req's provider closest to req (Nearest's
// first), nil when the set has none of that provider; entries are the
// set's replay entries (nil when it is not compact).
func Closest(req *provider.Request, src *source.Source, snaps []*check.Snapshot, entries *replay.Entries) *check.Snapshot {
	if c := NewNearest(snaps, entries).Find(req, src, 1); len(c) > 0 {
		return c[0].Snapshot
	}
	return nil
}

var seed = maphash.MakeSeed()

// mix combines two hashes (order matters).
func mix(a, b uint64) uint64 {
	a ^= b + 0x9e3779b97f4a7c15 + (a << 6) + (a >> 2)
	return a * 0xff51afd7ed558ccd
}

// features are the hashed leaves of a request: for every value at JSON
// pointer p, hash(p) (structure) and, for scalars, hash(p, value)
// (content). Pointer hashes are chained from the parent's, so no pointer
// string is built. Sorted and deduplicated.
func features(request map[string]any) []uint64 {
	out := make([]uint64, 0, 64)
	var walk func(ph uint64, v any)
	leaf := func(ph uint64, kind byte, val string) {
		out = append(out, ph, mix(ph, uint64(kind)^maphash.String(seed, val)))
	}
	walk = func(ph uint64, v any) {
		switch t := v.(type) {
		case map[string]any:
			out = append(out, mix(ph, 'o'))
			for k, e := range t {
				walk(mix(ph, maphash.String(seed, k)), e)
			}
		case []any:
			leaf(ph, 'a', strconv.Itoa(len(t)))
			for i, e := range t {
				walk(mix(ph, uint64(i)+1), e)
			}
		case string:
			leaf(ph, 's', t)
		case bool:
			leaf(ph, 'b', strconv.FormatBool(t))
		case nil:
			leaf(ph, 'n', "")
		case json.Number:
			leaf(ph, 'd', t.String())
		default:
			leaf(ph, 'd', fmt.Sprint(t))
		}
	}
	walk(0, request)
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets (1 for two empty ones).
func jaccard(a, b []uint64) float64 {
	i, j, both := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			both++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - both
	if union == 0 {
		return 1
	}
	return math.Round(float64(both)/float64(union)*1000) / 1000
}

// explain turns ranked candidates into the report's close snapshots: each
// with the JSON-pointer changes from the snapshot's key request to the
// request's (under kc, so a volatile value a rule rewrites is not a
// change), and the unified diff against the first.
func explain(display string, cands []Candidate, req *provider.Request, kc *provider.KeyContext, entries *replay.Entries) (near []result.Near, diff string) {
	b := keyDocument(string(req.Provider), req.Endpoint, req.Body, req.Headers, kc)
	var norm provider.KeyNormalizer
	if kc != nil {
		norm = kc.Normalize
	}
	for i, c := range cands {
		s := c.Snapshot
		rec, err := entries.FullRecord(s)
		if err != nil {
			// The file went away or changed while serving: say so instead
			// of comparing against a partial record.
			nr := result.Near{File: display + "/" + s.Rel, Similarity: c.Similarity, SameSource: c.SameSource, SameModel: c.SameModel,
				Source: s.Record.Source.Display(), Changes: []string{"(cannot compare: " + err.Error() + ")"}}
			near = append(near, nr)
			if i == 0 {
				diff = "cannot diff against " + display + "/" + s.Rel + ": " + err.Error() + "\n"
			}
			continue
		}
		skc := provider.WithNormalizer(provider.RecordKeyContext(rec.ParentID, rec.Turn), norm)
		a := keyDocument(s.Provider, provider.Endpoint(rec.Endpoint), rec.Request, rec.RequestHeaders, skc)
		nr := result.Near{File: display + "/" + s.Rel, Similarity: c.Similarity, SameSource: c.SameSource, SameModel: c.SameModel,
			Source: s.Record.Source.Display()}
		nr.Changes = keyChanges(a, b)
		near = append(near, nr)
		if i == 0 {
			diff = render.UnifiedDiff(display+"/"+s.Rel, "request "+req.ID(), pretty(a), pretty(b))
		}
	}
	return near, diff
}

// keyChanges lists the differences of two key objects: the request's by
// their pointer in the request, the endpoint and headers by name.
func keyChanges(a, b map[string]any) []string {
	var out []string
	if a["endpoint"] != b["endpoint"] {
		out = append(out, provider.PointerChanges(map[string]any{"endpoint": a["endpoint"]}, map[string]any{"endpoint": b["endpoint"]})[0][1:])
	}
	for _, c := range provider.PointerChanges(orEmpty(a["headers"]), orEmpty(b["headers"])) {
		out = append(out, "headers"+c)
	}
	return append(out, provider.PointerChanges(a["request"], b["request"])...)
}

func orEmpty(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return v
}
