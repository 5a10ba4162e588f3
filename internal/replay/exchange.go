package replay

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
)

// respondExchange answers from an exchange record (DESIGN §13.4): the
// recorded status, Content-Type and body bytes (a JSON body in its
// canonical form), whatever the status was.
func (e *Entries) respondExchange(ctx context.Context, w http.ResponseWriter, s *check.Snapshot, o Options) (Result, error) {
	var res Result
	errShape := format(s)
	rec, err := e.FullRecord(s)
	var resp map[string]any
	if err == nil {
		resp, _ = rec.Raw["response"].(map[string]any)
	}
	var body []byte
	if err == nil {
		body, _, err = provider.ExchangeBytes(resp)
	}
	status := rec.Response.Status
	if err == nil && (status < 100 || status > 599) {
		err = fmt.Errorf("status %d", status)
	}
	if err != nil {
		err = fmt.Errorf("snapshot %s: cannot replay its response: %w", s.Rel, err)
		provider.WriteError(w, errShape, http.StatusInternalServerError, "api_error", "", "traceforge replay: "+err.Error())
		return res, err
	}
	if o.Latency && rec.Response.LatencyMS > 0 {
		sleep := o.sleeper()
		if err := sleep(ctx, time.Duration(rec.Response.LatencyMS)*time.Millisecond); err != nil {
			return res, err
		}
	}
	h := w.Header()
	h.Set(provider.HeaderSnapshotID, s.Record.ID)
	if len(body) > 0 {
		h.Set("Content-Type", provider.ExchangeContentType(resp))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err = w.Write(body)
	return res, err
}

// occurrences maps the key of a request recorded more than once in a run
// (an exchange polled, an LLM call answered differently: DESIGN §13.4) to
// its snapshots' positions in order of occurrence, and counts how many of
// its requests were answered so far.
type occurrences struct {
	order map[string][]occurrence // base key → occurrences, ascending
	next  map[string]int          // base key → requests answered so far
}

type occurrence struct {
	n   int   // the record's occurrence
	pos int32 // its position in Index.all
}

// indexOccurrences records the occurrences of ix.all.
func (ix *Index) indexOccurrences() {
	for i, s := range ix.all {
		if s.Record == nil || s.BaseKey == "" {
			continue
		}
		if s.Record.Occurrence == 0 && s.BaseKey == s.Key {
			// The first occurrence matters only when later ones exist:
			// added below, once they are known.
			continue
		}
		if ix.occ.order == nil {
			ix.occ.order, ix.occ.next = map[string][]occurrence{}, map[string]int{}
		}
		ix.occ.order[s.BaseKey] = append(ix.occ.order[s.BaseKey], occurrence{n: s.Record.Occurrence, pos: int32(i)})
	}
	for base, list := range ix.occ.order {
		if first, ok := ix.position(base); ok {
			list = append(list, occurrence{n: 0, pos: first})
		}
		sort.Slice(list, func(i, j int) bool { return list[i].n < list[j].n })
		ix.occ.order[base] = list
	}
}

// Occurs reports whether key (a request's own key) was recorded as several
// occurrences: each request then gets the next one in order, the last
// repeating, and must not be memoized.
func (ix *Index) Occurs(key string) bool { return len(ix.occ.order[key]) > 0 }

// nextOccurrence returns the snapshot for the next request of key, which
// Occurs: the occurrence of the request's place in the run, else the
// latest occurrence before it (the last one repeats), and counts the hit.
func (ix *Index) nextOccurrence(key string) *check.Snapshot {
	list := ix.occ.order[key]
	ix.occMu.Lock()
	n := ix.occ.next[key]
	ix.occ.next[key] = n + 1
	ix.occMu.Unlock()
	pick := list[0]
	for _, o := range list {
		if o.n <= n {
			pick = o
		}
	}
	ix.hits[pick.pos].Add(1)
	return ix.all[pick.pos]
}
