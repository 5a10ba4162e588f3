package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/traceforge/traceforge/internal/check"
)

// Kind classifies a call that did not end as a stored snapshot.
type Kind string

// Problem kinds. Refused, collision and nondeterminism are "refused"; the
// rest are "not snapshotted".
const (
	KindUnknownPath    Kind = "unknown-path"
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

// refusedKind reports whether k counts as a refused snapshot (the call was
// answered completely but its snapshot cannot be stored).
func refusedKind(k Kind) bool {
	return k == KindRefused || k == KindCollision
}

// Problem is one call (or several identical ones) that did not end as a
// stored snapshot, with what to do about it.
type Problem struct {
	Kind    Kind
	Call    string   // "POST /v1/chat/completions from app.py:12:main"
	ID      string   // the snapshot id of the request ("" when it has none)
	Key     string   // the full request key ("" when it has none)
	File    string   // the snapshot file concerned, when there is one
	Message string   // what happened
	Details []string // one line per failed check or differing field
	Fix     string   // what to do
	Count   int      // how many calls ended this way

	// resolvable problems are dropped when the same key gets a good
	// snapshot later in the run (e.g. an SDK retry after a 500).
	resolvable bool
}

// Summary is the outcome of a recording run.
type Summary struct {
	Calls            int // requests that reached the proxy
	Recorded         int // new snapshots written
	Changed          int // snapshots rewritten with a changed answer
	SourceUpdated    int // snapshots rewritten with a new source only
	Unchanged        int // calls whose snapshot was kept byte for byte
	Served           int // --only-missing hits answered from the set
	Refused          int // calls answered but refused a snapshot
	NotSnapshotted   int // calls forwarded without a snapshot
	Nondeterministic int // calls that contradicted an earlier answer
	Retried          int // failed calls whose request later succeeded
	Tokens           int64
	Duration         time.Duration
	Problems         []Problem
	// Unrequested lists the snapshot files (display paths) this run never
	// requested; Prune removes them.
	Unrequested []string
	// ManifestError is set when the manifest could not be written.
	ManifestError error
}

// Failed reports whether the run could not snapshot every call (exit 1).
func (s *Summary) Failed() bool { return len(s.Problems) > 0 || s.ManifestError != nil }

// Write prints the summary: the counts line, then every problem with its
// fix, then (when listUnrequested) the snapshots the run did not request.
// Every line is redacted.
func (s *Summary) Write(w io.Writer, listUnrequested bool) {
	out := func(format string, args ...any) {
		fmt.Fprintln(w, check.Redact(fmt.Sprintf(format, args...)))
	}
	rec := fmt.Sprintf("%d recorded", s.Recorded+s.Changed+s.SourceUpdated)
	if s.Changed > 0 || s.SourceUpdated > 0 {
		rec += fmt.Sprintf(" (%d new, %d changed, %d source updated)", s.Recorded, s.Changed, s.SourceUpdated)
	}
	line := fmt.Sprintf("traceforge record: %d call(s): %s, %d unchanged", s.Calls, rec, s.Unchanged)
	if s.Served > 0 {
		line += fmt.Sprintf(", %d served from snapshots", s.Served)
	}
	line += fmt.Sprintf(", %d refused, %d not snapshotted", s.Refused, s.NotSnapshotted)
	if s.Nondeterministic > 0 {
		line += fmt.Sprintf(", %d nondeterministic", s.Nondeterministic)
	}
	out("%s", line)
	out("tokens: %d, time: %s", s.Tokens, s.Duration.Round(time.Millisecond))
	if s.Retried > 0 {
		out("%d failed call(s) succeeded when retried and are not counted as failures", s.Retried)
	}
	s.WriteProblems(w)
	if n := len(s.Unrequested); n > 0 {
		if listUnrequested {
			out("%d snapshot(s) not requested by this run:", n)
			for _, u := range s.Unrequested {
				out("   %s", u)
			}
		} else {
			out("%d snapshot(s) not requested by this run (record --prune -- COMMAND removes them)", n)
		}
	}
}

// WriteProblems prints every problem with its fix, and the manifest error,
// as Write does. Every line is redacted.
func (s *Summary) WriteProblems(w io.Writer) {
	out := func(format string, args ...any) {
		fmt.Fprintln(w, check.Redact(fmt.Sprintf(format, args...)))
	}
	for _, p := range s.Problems {
		head := "❌ "
		switch {
		case p.Kind == KindNondeterminism:
			head += "nondeterminism: "
		case refusedKind(p.Kind):
			head += "refused: "
		default:
			head += "not snapshotted: "
		}
		head += p.Call
		if p.ID != "" {
			head += " (id " + p.ID + ")"
		}
		if p.Count > 1 {
			head += fmt.Sprintf(" ×%d", p.Count)
		}
		out("%s", head)
		if p.File != "" {
			out("   %s", p.File)
		}
		out("   %s", p.Message)
		for _, d := range p.Details {
			out("     %s", d)
		}
		if p.Fix != "" {
			out("   → %s", p.Fix)
		}
	}
	if s.ManifestError != nil {
		out("❌ manifest not written: %v", s.ManifestError)
		out("   → check the snapshot folder's permissions, then run: traceforge snapshot reindex")
	}
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
func (r *Recorder) Finish() *Summary {
	r.finishMu.Lock()
	defer r.finishMu.Unlock()
	if r.summary != nil {
		return r.summary
	}
	close(r.stop)
	<-r.flushed
	_ = r.flushManifest(true)
	r.summary = r.buildSummary()
	r.mmu.Lock()
	r.summary.ManifestError = r.manifestErr
	r.mmu.Unlock()
	return r.summary
}

func (r *Recorder) buildSummary() *Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Summary{
		Calls:         r.counts.calls,
		Recorded:      r.counts.recorded,
		Changed:       r.counts.changed,
		SourceUpdated: r.counts.sourceUpdated,
		Unchanged:     r.counts.unchanged,
		Served:        r.counts.served,
		Tokens:        r.counts.tokens,
		Duration:      r.now().Sub(r.started),
	}
	for _, p := range r.problems {
		if p.resolvable && p.Key != "" {
			if st := r.run[p.Key]; st != nil && st.isOK() {
				s.Retried += p.Count
				continue
			}
		}
		switch {
		case p.Kind == KindNondeterminism:
			s.Nondeterministic += p.Count
		case refusedKind(p.Kind):
			s.Refused += p.Count
		default:
			s.NotSnapshotted += p.Count
		}
		s.Problems = append(s.Problems, *p)
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

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
