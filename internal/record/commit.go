package record

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// commit decides what a complete, well-formed answer does to the set
// (DESIGN §6 and §11): a new snapshot, a kept file (same key, equal answer),
// a source-only rewrite, a changed snapshot, or a listed problem
// (nondeterminism, id collision, refused by the checks). Calls with the same
// key are serialized by the key's lock; different keys commit in parallel.
// a.wire is a plain answer kept as text instead of body (DESIGN §13.4), ""
// when body holds it.
func (r *Recorder) commit(c *call, a answer) {
	fields := a.fields
	req := c.req
	p := string(req.Provider)
	key, id := req.Key, req.ID()
	rel := snapshot.RelPath(p, id)
	src := c.src

	// The run's totals count every call the upstream answered completely,
	// whatever becomes of its snapshot: that is what the run spent.
	// --only-missing hits never reach the upstream and are not counted.
	model, _ := req.Body["model"].(string)
	r.totals.Add(p, string(req.Endpoint), model, snapshot.Response{Fields: fields, LatencyMS: a.latency, Stream: req.Stream, Body: a.body})
	r.mu.Lock()
	r.counts.tokens += fields.TokensUsed
	st := r.run[key]
	if st == nil {
		st = &keyState{provider: p, rel: rel}
		r.run[key] = st
	}
	old := r.existing[key] // read-only after load
	r.mu.Unlock()

	st.mu.Lock()
	defer st.mu.Unlock()
	if st.answered {
		// Nondeterminism is judged on the answer's meaning (DESIGN §13.3):
		// answers that differ only in ids, timestamps or usage (prompt
		// caching) are the same answer, and the first one is kept. One that
		// differs from the answer before it is kept as the request's next
		// occurrence (DESIGN §13.4, occurrence.go).
		n := st.answers
		st.answers++
		if diff := provider.MeaningDiff(st.latest(), fields); len(diff) > 0 {
			r.commitOccurrence(c, st, n, a, diff)
			return
		}
		if st.isOK() {
			r.count(func(c *counts) { c.unchanged++ })
			st.seeSource(src, c.describe())
			return
		}
		// The first answer could not be stored (refused, collision): this
		// call meets the same fate and is listed again below.
	} else {
		st.answered, st.fields, st.answers = true, fields, 1
	}

	var oldRec *snapshot.Record
	switch {
	case old != nil && r.cfg.OnlyMissing != nil:
		// A compact snapshot (--only-missing) is read again; one that
		// cannot be is recorded anew (counted as changed).
		oldRec, _ = r.cfg.OnlyMissing.FullRecord(old)
	case old != nil:
		oldRec = old.Record
	}
	if oldRec != nil && provider.Equal(oldRec.Response.Fields, fields) {
		// Same answer: the file stays as it is. Where the call was made is
		// settled once the run is over (settleSources), so that calls from
		// several places never rewrite it back and forth.
		st.recHash, st.source, st.kept = oldRec.Hash, oldRec.Source, true
		st.setOK()
		st.seeSource(src, c.describe())
		r.count(func(c *counts) { c.unchanged++ })
		return
	}
	resp := a.response(req.Stream)
	// The key and the lineage were computed once, when the call was parsed.
	err := c.linErr
	var rec map[string]any
	if err == nil {
		rec, err = registry.NewRecordKeyed(key, req.KeyNormalizers, c.lin, req.Endpoint, c.arrival, src, req.Body, req.Headers, resp)
	}
	if err == nil {
		err = defaults.Mark(rec, req.DefaultsApplied)
	}
	if err != nil {
		r.addProblem(&problem{Kind: KindRefused, Call: c.describe(), ID: id, Key: key,
			Message: "cannot build the snapshot: " + err.Error(), Fix: "report this to the traceforge maintainers"})
		return
	}
	// What the check would recompute from the file (key, lineage, record
	// hash) was computed from these values; write hands it over.
	if !r.write(c.describe(), p, id, key, rec, &check.Built{Key: key, Applied: req.KeyNormalizers, Lineage: c.lin}) {
		return
	}
	// The record is not kept: a long run would hold every request and
	// answer in memory. A source rewrite reads it back (storedRecord).
	st.recHash, st.source = recordHash(rec), src
	st.seeSource(src, c.describe())
	st.setOK()
	if old != nil {
		r.count(func(c *counts) { c.changed++ })
		r.logf("changed %s (%s)", path.Join(r.display, rel), c.describe())
	} else {
		r.count(func(c *counts) { c.recorded++ })
		r.logf("recorded %s (%s)", path.Join(r.display, rel), c.describe())
	}
}

// movesSource reports whether a LockPerCommit recorder replaces the stored
// source old of an unchanged answer by src: only for a smaller source (the
// rule for one key called from several places) or another line of the same
// function (the call moved). Processes recording in parallel see only their
// own calls; any other rule would let two of them rewrite the file back and
// forth on every run.
func movesSource(src, old source.Source) bool {
	return src.Less(old) || (src.File == old.File && src.Function == old.Function)
}

func (r *Recorder) count(f func(*counts)) {
	r.mu.Lock()
	f(&r.counts)
	r.mu.Unlock()
}

// settleSources gives each snapshot of the run the source §11 asks for,
// once the run is over: of the places one key was called from, the
// smallest (storage.keepsSource decides whether it replaces the stored
// one). A kept file is rewritten only when that source differs from the
// stored one, so an unchanged answer called from the same places as before
// is never rewritten (DESIGN §12.10.6), whatever order the calls came in.
func (r *Recorder) settleSources() {
	r.mu.Lock()
	keys := make([]string, 0, len(r.run))
	for k := range r.run {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	sort.Strings(keys)
	for _, key := range keys {
		r.mu.Lock()
		st := r.run[key]
		r.mu.Unlock()
		st.mu.Lock()
		if st.isOK() && st.recHash != "" && st.seen && !r.storage.keepsSource(st.minSource, st.source) {
			if r.rewriteSource(st, key, st.minCall, st.minSource) && st.kept {
				r.count(func(c *counts) { c.unchanged--; c.sourceUpdated++ })
			}
		}
		st.mu.Unlock()
	}
}

// rewriteSource stores st's record again with a new source; the timestamp and
// response stay. It reports whether the file was written. st.mu is held.
func (r *Recorder) rewriteSource(st *keyState, key, call string, src source.Source) bool {
	rec, err := r.storedRecord(st)
	if err != nil {
		r.logf("source of %s not updated to %s: %v", path.Join(r.display, st.rel), src, err)
		return false
	}
	rec["source"] = map[string]any{"file": src.File, "line": int64(src.Line), "function": src.Function}
	if err := snapshot.Rehash(rec); err != nil {
		return false
	}
	id, _ := rec["id"].(string)
	if !r.write(call, st.provider, id, key, rec, nil) {
		return false
	}
	st.recHash, st.source = recordHash(rec), src
	r.logf("source of %s is now %s", path.Join(r.display, st.rel), src)
	return true
}

// storedRecord reads back the record this run stored for st (written or
// kept), refusing a file that no longer holds it. st.mu is held.
func (r *Recorder) storedRecord(st *keyState) (map[string]any, error) {
	data, err := r.store.ReadRel(st.rel, snapshot.MaxSnapshotFileSize)
	if err != nil {
		return nil, err
	}
	rec, err := snapshot.FileRecord(data)
	if err != nil {
		return nil, err
	}
	if h, err := snapshot.RecordHash(rec); err != nil || h != st.recHash || recordHash(rec) != h {
		return nil, errors.New("the file changed since this run stored it")
	}
	return rec, nil
}

// recordHash is a record's stored hash field.
func recordHash(rec map[string]any) string {
	h, _ := rec["hash"].(string)
	return h
}

// write checks a record exactly as verify would see its file, then writes
// it atomically. Refusals and id collisions are listed. The key's lock is
// held, so one file has one writer at a time. built (may be nil) holds what
// the caller computed from rec (check.Built, Doc excepted): the check uses
// it once the file's bytes decode back to exactly the document built.
func (r *Recorder) write(call string, p, id, key string, rec map[string]any, built *check.Built) bool {
	rel := snapshot.RelPath(p, id)
	refuse := func(msg string, details []string, fix string) bool {
		// No File: nothing was written; the details name JSON pointers.
		r.addProblem(&problem{Kind: KindRefused, Call: call, ID: id, Key: key, Message: msg, Details: details, Fix: fix})
		return false
	}
	doc, err := snapshot.FileDocument(rec)
	if err != nil {
		return refuse("cannot build the snapshot file: "+err.Error(), nil, "report this to the traceforge maintainers")
	}
	// doc becomes exactly what verify will decode from the file (numbers as
	// their written text), so it is checked as is instead of decoding the
	// file back; a value the file could not hold is refused here.
	if err := snapshot.AsDecoded(doc); err != nil {
		return refuse("the snapshot would not read back: "+err.Error(), nil, "the request or answer holds a value JSON snapshots cannot store exactly (e.g. an integer beyond 2^53)")
	}
	bp := fileBufs.Get().(*[]byte)
	data, err := snapshot.AppendFile((*bp)[:0], doc)
	if err != nil {
		return refuse("cannot encode the snapshot file: "+err.Error(), nil, "report this to the traceforge maintainers")
	}
	if int64(len(data)) > maxSnapshot {
		return refuse(fmt.Sprintf("the snapshot would be %d bytes, over the %d MiB limit", len(data), maxSnapshot>>20), nil, "lower max_tokens for the recorded calls")
	}
	opts := r.cfg.Check
	if built != nil {
		built.Doc = doc
		opts.Built = built
	}
	_, findings := check.CheckDocument(rel, p, doc, opts)
	if checkedDiffers != nil {
		// Tests: the file decoded back must be doc, and the full check of
		// it must find what this one found.
		v, err := snapshot.DecodeAliasing(data)
		_, full := check.CheckDocument(rel, p, v, r.cfg.Check)
		if err != nil || !reflect.DeepEqual(v, any(doc)) || !reflect.DeepEqual(full, findings) {
			checkedDiffers(rel, findings, full, err)
		}
	}
	// A later occurrence of an LLM call is nondeterminism, which its
	// caller lists itself (commitOccurrence): the occurrence is kept.
	findings = withoutOccurrenceFinding(findings)
	if findings.Errors() > 0 {
		var details, fixes []string
		seen := map[string]bool{}
		for _, f := range findings {
			if f.Severity != finding.Error {
				continue
			}
			line := f.Message + " [" + f.Rule + "]"
			if f.Pointer != "" {
				line = f.Pointer + ": " + line
			}
			details = append(details, line)
			if f.Fix != "" && !seen[f.Fix] {
				seen[f.Fix] = true
				fixes = append(fixes, f.Fix)
			}
		}
		return refuse("the snapshot fails the checks verify runs; not written", details, strings.Join(fixes, "; "))
	}
	collision := func(otherRel, otherKey string) bool {
		r.addProblem(&problem{Kind: KindCollision, Call: call, ID: id, Key: key,
			Message: fmt.Sprintf("id %s is already taken by %s, a different request (key %s); this call's key is %s; not written", id, path.Join(r.display, otherRel), otherKey, key),
			Fix:     "change the request slightly (e.g. the prompt) so that its key differs, and report the collision to the traceforge maintainers"})
		return false
	}
	// Claim the id (ids are unique across provider folders) before writing.
	r.mu.Lock()
	o, taken := r.byID[id]
	if taken && o.key != key {
		r.mu.Unlock()
		return collision(o.rel, o.key)
	}
	r.byID[id] = idOwner{key: key, rel: rel}
	r.mu.Unlock()
	h, _ := doc["hash"].(string)
	entry := snapshot.ManifestEntry{ID: id, Provider: p, File: rel, Hash: h}
	if err = r.storage.write(entry, key, data); err != nil {
		r.mu.Lock()
		if !taken {
			delete(r.byID, id)
		}
		r.mu.Unlock()
		var ce *collisionError
		if errors.As(err, &ce) {
			return collision(ce.rel, ce.key)
		}
		fix := "check the snapshot folder's permissions and free space"
		if errors.Is(err, snapshot.ErrLocked) {
			fix = "another traceforge record holds the snapshot folder; let it finish and record again"
		}
		r.addProblem(&problem{Kind: KindWriteFailed, Call: call, ID: id, Key: key, File: rel,
			Message: err.Error(), Fix: fix})
		return false
	}
	r.mu.Lock()
	r.entries[rel] = entry
	r.dirty = true // read by the run storage's flush only
	r.mu.Unlock()
	// The file is on disk and nothing holds data or v (decoded from it)
	// any more: its buffer serves the next file. (A refused file's buffer
	// is not reused: its findings may quote the decoded text.)
	if cap(data) <= maxPooledFile {
		*bp = data[:0]
		fileBufs.Put(bp)
	}
	return true
}

// fileBufs holds the buffers write encodes snapshot files into (*[]byte);
// a buffer that grew past maxPooledFile is let go instead.
var fileBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

const maxPooledFile = 256 << 10

// checkedDiffers, when set (the package's tests set it for every test), is
// told of a file whose check as written (the document itself, with the
// record's own Built values: key, lineage, record hash) found otherwise
// than the full check of the file decoded back, or that does not decode
// back to the document (err: the decoding error).
var checkedDiffers func(rel string, asWritten, full finding.Findings, err error)

func (r *Recorder) markRequested(id string) {
	r.mu.Lock()
	r.requested[id] = true
	r.mu.Unlock()
}

// addProblem lists a problem; the same problem for the same call is counted.
func (r *Recorder) addProblem(p *problem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addProblemLocked(p)
}

func (r *Recorder) addProblemLocked(p *problem) {
	k := string(p.Kind) + "\x00" + p.Key + "\x00" + p.Call + "\x00" + p.Message
	if old := r.problemIdx[k]; old != nil {
		old.Count++
		return
	}
	p.Count = 1
	r.problemIdx[k] = p
	r.problems = append(r.problems, p)
	r.logf("%s: %s: %s", p.Kind, p.Call, p.Message)
}

// sortedEntries returns the manifest entries. r.mu is held.
func (r *Recorder) sortedEntries() []snapshot.ManifestEntry {
	out := make([]snapshot.ManifestEntry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}
