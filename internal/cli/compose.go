package cli

import (
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
)

// onlyMissing composes record --only-missing from the two handlers: the
// recorder asks replay's Responder about each call and lets it answer the
// hits (record does not import replay). nil when the flag is off.
func onlyMissing(on bool, dir string) record.OnlyMissing {
	if !on {
		return nil
	}
	return replay.NewResponder(dir)
}
