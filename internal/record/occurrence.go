package record

import (
	"fmt"
	"path"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// latest is the answer a new answer of the key is compared with: the
// latest occurrence kept, else the first answer. s.mu is held.
func (s *keyState) latest() snapshot.Fields {
	if s.hasLast {
		return s.last
	}
	return s.fields
}

// commitOccurrence keeps the n-th answer (0-based) of an LLM request that
// differs in meaning from the answer before it as the request's
// occurrence n (DESIGN §13.4): its own record, keyed by the request's key
// and n, which replay serves in turn — an agent's run is reproduced
// offline. It is still nondeterminism: listed (record exits 1) and
// reported by verify, unless a policy exception relaxes temperature for
// the model, when it is only logged. st (the request's state) is locked.
func (r *Recorder) commitOccurrence(c *call, st *keyState, n int, a answer, diff []string) {
	fields := a.fields
	req := c.req
	p := string(req.Provider)
	key := registry.OccurrenceKey(req.Key, n)
	id := snapshot.IDOf(key)
	rel := snapshot.RelPath(p, id)
	st.last, st.hasLast = fields, true
	where := path.Join(r.display, rel)
	if ex := r.cfg.Check.Config.ExceptionForRequest(req.Body); ex.Relaxes("temperature") {
		r.logf("%s: answered differently within this run (the exception for %s relaxes the determinism policy): kept as occurrence %d, %s", c.describe(), ex.Model, n+1, where)
	} else {
		r.addProblem(&problem{Kind: KindNondeterminism, Call: c.describe(), ID: req.ID(), Key: req.Key,
			Message: fmt.Sprintf("the same request was answered differently within this run; the answer is kept as its occurrence %d (%s), replayed in turn, and verify fails on it under the determinism policy", n+1, where),
			Details: diff,
			Fix:     "record with temperature 0 (and a fixed seed where the API takes one); if the model cannot be deterministic, declare a per-model exception relaxing temperature in " + check.ConfigName})
	}

	r.mu.Lock()
	ost := r.run[key]
	if ost == nil {
		ost = &keyState{provider: p, rel: rel}
		r.run[key] = ost
	}
	old := r.existing[key]
	r.mu.Unlock()
	r.markRequested(id)
	ost.mu.Lock()
	defer ost.mu.Unlock()
	ost.answered, ost.fields = true, fields
	if old != nil && old.Record != nil && provider.Equal(old.Record.Response.Fields, fields) {
		ost.recHash, ost.source, ost.kept = old.Record.Hash, old.Record.Source, true
		ost.setOK()
		ost.seeSource(c.src, c.describe())
		r.count(func(c *counts) { c.unchanged++ })
		return
	}
	resp := a.response(req.Stream)
	err := c.linErr
	var rec map[string]any
	if err == nil {
		rec, err = registry.NewRecordKeyed(key, req.KeyNormalizers, c.lin, req.Endpoint, c.arrival, c.src, req.Body, req.Headers, resp)
	}
	if err == nil {
		err = defaults.Mark(rec, req.DefaultsApplied)
	}
	if err == nil {
		rec["occurrence"] = int64(n)
		err = snapshot.Rehash(rec)
	}
	if err != nil {
		r.addProblem(&problem{Kind: KindRefused, Call: c.describe(), ID: id, Key: key,
			Message: "cannot build the snapshot: " + err.Error(), Fix: "report this to the traceforge maintainers"})
		return
	}
	if !r.write(c.describe(), p, id, key, rec, &check.Built{Key: key, BaseKey: req.Key, Applied: req.KeyNormalizers, Lineage: c.lin}) {
		return
	}
	ost.recHash, ost.source = recordHash(rec), c.src
	ost.seeSource(c.src, c.describe())
	ost.setOK()
	if old != nil {
		r.count(func(c *counts) { c.changed++ })
		r.logf("changed %s (%s, occurrence %d)", where, c.describe(), n+1)
	} else {
		r.count(func(c *counts) { c.recorded++ })
		r.logf("recorded %s (%s, occurrence %d)", where, c.describe(), n+1)
	}
}

// withoutOccurrenceFinding drops the check's nondeterminism finding about
// a record's occurrence: record lists it as a problem of the call itself.
func withoutOccurrenceFinding(fs finding.Findings) finding.Findings {
	out := fs[:0:0]
	for _, f := range fs {
		if f.Rule == check.RuleDeterminism && f.Pointer == "/snapshots/0/occurrence" {
			continue
		}
		out = append(out, f)
	}
	return out
}
