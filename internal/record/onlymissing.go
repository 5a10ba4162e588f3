package record

import (
	"context"
	"net/http"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// OnlyMissing serves, during a recording, the calls the set already holds
// (record --only-missing): the recorder looks each parsed call up and, on a
// hit, answers it from the set instead of forwarding it. The CLI and the Go
// transport compose it from internal/replay (replay.NewResponder); record
// never imports replay.
type OnlyMissing interface {
	// Trim is check.Options.Trim for the set New loads: each checked
	// snapshot is kept as the server needs it.
	Trim(s *check.Snapshot) *check.Snapshot
	// Load indexes the checked set (nil: there is no snapshot folder yet).
	// New calls it once, before any call arrives.
	Load(set *check.SetResult)
	// Lookup returns the snapshot of a parsed call and counts it
	// requested; nil on a miss.
	Lookup(req *provider.Request) *check.Snapshot
	// Serve writes the recorded answer of s to the call.
	Serve(ctx context.Context, w http.ResponseWriter, req *provider.Request, s *check.Snapshot) error
	// FullRecord returns the complete record of a loaded snapshot (a
	// trimmed one is read back from its file).
	FullRecord(s *check.Snapshot) (*snapshot.Record, error)
}
