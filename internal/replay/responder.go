package replay

import (
	"context"
	"net/http"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Responder serves, during a recording, the calls the set already holds
// (record --only-missing): its methods are those of record.OnlyMissing, and
// the CLI and the Go transport give one to record, which never imports
// replay. It owns the set's Entries and, once loaded, its Index.
type Responder struct {
	entries *Entries
	ix      *Index
}

// NewResponder returns a Responder for the set in the snapshot folder dir.
func NewResponder(dir string) *Responder { return &Responder{entries: NewEntries(dir)} }

// Trim is check.Options.Trim for the set: each checked snapshot is kept
// compact (Entries.Compact, no fingerprint).
func (r *Responder) Trim(s *check.Snapshot) *check.Snapshot { return r.entries.Compact(s, nil) }

// Load indexes the checked set (nil: there is no folder yet, nothing to
// serve). It is called once, before the first Lookup.
func (r *Responder) Load(set *check.SetResult) { r.ix = NewIndex(set) }

// Lookup returns the snapshot of req and counts it requested; nil on a
// miss (Index.LookupRequest).
func (r *Responder) Lookup(req *provider.Request) *check.Snapshot { return r.ix.LookupRequest(req) }

// Serve writes the recorded answer of s to req (Entries.Respond).
func (r *Responder) Serve(ctx context.Context, w http.ResponseWriter, req *provider.Request, s *check.Snapshot) error {
	_, err := r.entries.Respond(ctx, w, req, s, Options{})
	return err
}

// FullRecord returns the complete record of s (Entries.FullRecord): a
// compact snapshot's is read back from its file.
func (r *Responder) FullRecord(s *check.Snapshot) (*snapshot.Record, error) {
	return r.entries.FullRecord(s)
}
