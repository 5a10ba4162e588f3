package record

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Kind classifies a call that did not end as a stored snapshot.
type Kind string

// Problem kinds. Refused, collision and nondeterminism are "refused"; the
// rest are "not snapshotted".
const (
	KindUnknownPath Kind = "unknown-path"
	// KindForeignCredential: the call carried another provider's
	// credential and was not sent anywhere.
	KindForeignCredential Kind = "foreign-credential"
	// KindNoCredential: a call of a provider traceforge signs for
	// (Bedrock) carried no credential of the application's own and was not
	// sent anywhere.
	KindNoCredential   Kind = "no-credential"
	KindBadRequest     Kind = "bad-request"
	KindNoSource       Kind = "no-source"
	KindUpstreamError  Kind = "upstream-error"
	KindUnreachable    Kind = "upstream-unreachable"
	KindBroken         Kind = "broken-answer"
	KindClientClosed   Kind = "client-closed"
	KindUsageRejected  Kind = "include-usage-rejected"
	KindBadResponse    Kind = "bad-response"
	KindRefused        Kind = "refused"
	KindCollision      Kind = "id-collision"
	KindNondeterminism Kind = "nondeterminism"
	KindWriteFailed    Kind = "write-failed"
)

// outcome heads a problem of kind k in the summary: refused (the call
// was answered completely but its snapshot cannot be stored),
// nondeterminism, or not snapshotted.
func outcome(k Kind) string {
	switch k {
	case KindRefused, KindCollision, KindForeignCredential, KindNoCredential:
		return result.OutcomeRefused
	case KindNondeterminism:
		return result.OutcomeNondeterminism
	}
	return result.OutcomeNotSnapshotted
}

// problem is one call (or several identical ones) that did not end as a
// stored snapshot, as the recorder collects it; the summary reports it as
// a finding.Finding.
type problem struct {
	Kind    Kind
	Call    string   // "POST /v1/chat/completions from app.py:12:main"
	ID      string   // the snapshot id of the request ("" when it has none)
	Key     string   // the full request key ("" when it has none)
	File    string   // the snapshot file concerned (relative to the folder), when there is one
	Message string   // what happened
	Details []string // one line per failed check or differing field
	Fix     string   // what to do
	Count   int      // how many calls ended this way

	// resolvable problems are dropped when the same key gets a good
	// snapshot later in the run (e.g. an SDK retry after a 500).
	resolvable bool
}

// finding is the problem as the summary reports it.
func (p *problem) finding() finding.Finding {
	return finding.Finding{File: p.File, Rule: string(p.Kind), Message: p.Message, Fix: p.Fix, Subject: p.Call,
		ID: p.ID, Key: p.Key, Details: p.Details, Count: p.Count, Outcome: outcome(p.Kind)}
}

// flushLoop rewrites the manifest at most once per interval while calls
// are recorded.
func (r *Recorder) flushLoop(interval time.Duration) {
	defer close(r.flushed)
	if interval < 0 {
		<-r.stop
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.flushManifest(false)
		}
	}
}

// FlushManifest writes the manifest now if the set changed since it was
// last written.
func (r *Recorder) FlushManifest() error { return r.flushManifest(false) }

// flushManifest writes the manifest through the storage (force: even when
// this run changed nothing).
func (r *Recorder) flushManifest(force bool) error { return r.storage.flush(force) }

// Finish stops the manifest writer, writes the manifest and returns the
// run's summary. Call it once no call is in flight (after the server has
// shut down). It is idempotent.
func (r *Recorder) Finish() *result.RecordSummary {
	r.finishMu.Lock()
	defer r.finishMu.Unlock()
	if r.summary != nil {
		return r.summary
	}
	close(r.stop)
	<-r.flushed
	r.settleSources()
	r.waitDurable()
	_ = r.flushManifest(true)
	if r.store.Temps != nil {
		r.store.Temps.Close() // no snapshot file is written after this
	}
	if r.flusher != nil {
		_ = r.flusher.Close() // failures were listed by flushFailed
	}
	r.summary = r.buildSummary()
	r.mmu.Lock()
	r.summary.ManifestError = r.manifestErr
	r.mmu.Unlock()
	return r.summary
}

func (r *Recorder) buildSummary() *result.RecordSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &result.RecordSummary{
		Dir:           r.display,
		Calls:         r.counts.calls,
		Recorded:      r.counts.recorded,
		Changed:       r.counts.changed,
		SourceUpdated: r.counts.sourceUpdated,
		Unchanged:     r.counts.unchanged,
		Served:        r.counts.served,
		Exchanges:     r.counts.exchanges,
		Tokens:        r.counts.tokens,
		Duration:      r.now().Sub(r.started),
	}
	totals := r.totals.Summary()
	s.Totals = &totals
	var ptrs []string
	var counts []int
	s.Defaulted, ptrs, counts = r.DefaultsApplied()
	for i, p := range ptrs {
		s.DefaultsSet = append(s.DefaultsSet, result.DefaultCount{Pointer: p, Calls: counts[i]})
	}
	for _, p := range r.problems {
		if p.resolvable && p.Key != "" {
			if st := r.run[p.Key]; st != nil && st.isOK() {
				s.Retried += p.Count
				continue
			}
		}
		switch outcome(p.Kind) {
		case result.OutcomeNondeterminism:
			s.Nondeterministic += p.Count
		case result.OutcomeRefused:
			s.Refused += p.Count
		default:
			s.NotSnapshotted += p.Count
		}
		s.Problems = append(s.Problems, p.finding())
	}
	s.Unrequested = r.unrequestedLocked()
	return s
}

// unrequestedLocked lists the display paths of snapshot files (on disk at
// start, or in the manifest) whose id was not requested. r.mu is held.
func (r *Recorder) unrequestedLocked() []string {
	seen := map[string]bool{}
	var out []string
	add := func(rel, id string) {
		if seen[rel] || r.requested[id] {
			return
		}
		seen[rel] = true
		out = append(out, path.Join(r.display, rel))
	}
	for rel, id := range r.allRels {
		add(rel, id)
	}
	for rel, e := range r.entries {
		add(rel, e.ID)
	}
	sort.Strings(out)
	return out
}

// Prune removes every snapshot the run did not request and rewrites the
// manifest. Only the CLI calls it, with a command, after Finish, and only
// when every call was snapshotted and the command exited 0 (DESIGN §11).
func (r *Recorder) Prune() (removed []string, err error) {
	if err := r.storage.canPrune(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	var rels []string
	for rel, id := range r.allRels {
		if !r.requested[id] {
			rels = append(rels, rel)
		}
	}
	for rel, e := range r.entries {
		if !r.requested[e.ID] {
			if _, onDisk := r.allRels[rel]; !onDisk {
				rels = append(rels, rel)
			}
		}
	}
	sort.Strings(rels)
	r.mu.Unlock()
	for _, rel := range rels {
		if rerr := r.store.Remove(rel); rerr != nil && !isNotExist(rerr) {
			err = fmt.Errorf("remove %s: %w", path.Join(r.display, rel), rerr)
			break
		}
		r.mu.Lock()
		delete(r.entries, rel)
		delete(r.allRels, rel)
		r.dirty = true
		r.mu.Unlock()
		removed = append(removed, path.Join(r.display, rel))
	}
	if ferr := r.flushManifest(true); ferr != nil && err == nil {
		err = ferr
	}
	return removed, err
}

// waitDurable waits until every snapshot file written so far is durable
// (SyncAfterAnswer); failures were listed by flushFailed.
func (r *Recorder) waitDurable() {
	if r.flusher != nil {
		_ = r.flusher.Wait()
	}
}

// flushFailed lists a snapshot file whose deferred fsync failed: it is in
// place but may not survive a power loss, and the run fails naming it, as a
// failed write does.
func (r *Recorder) flushFailed(rel string, err error) {
	r.mu.Lock()
	id := r.entries[rel].ID
	if id == "" {
		_, id, _ = snapshot.ValidRelPath(rel)
	}
	key := r.byID[id].key
	r.mu.Unlock()
	r.addProblem(&problem{Kind: KindWriteFailed, Call: "snapshot " + path.Join(r.display, rel), ID: id, Key: key, File: rel,
		Message: err.Error() + "; the file is in place but may not survive a power loss",
		Fix:     "check the disk (free space, kernel log) and record again; --sync=before-answer makes each answer wait for its fsync"})
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
