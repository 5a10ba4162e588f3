package harness

import (
	"encoding/binary"
	"math"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/replay"
)

// Replay's memo (replay.Memo) answers a request that hit before without
// parsing and keying it again. A replay row whose requests the memo answers
// measures the memo, not replay: every replay row shows the share of its
// measured calls the memo answered, and only rows where it answered none
// (cold rows: memo off, or more distinct requests than the memo holds) carry
// the replay CPU targets.
//
// `verify --serve` does not report its memo's hits, so the harness computes
// them: it runs the very calls the load generator made (each connection's
// Span, interleaved one call per connection in turn, as 32 connections at the
// same pace arrive) through a replay.Memo of the server's size, with
// replay's own code. Each distinct call of a set has its own digest (the
// bodies differ), so an item index stands for the request digest.

// MemoOff is the memo generation of a server started with
// --replay-memo=false (no memo).
const MemoOff = -1

// ServerMemoGeneration is the memo generation `verify --serve` gives a set
// of n snapshots (internal/verify's memoGeneration): room for each
// snapshot's request once, within [replay.MemoGeneration,
// 4×replay.MemoGeneration]; the memo holds two generations.
func ServerMemoGeneration(n int) int {
	return min(max(n, replay.MemoGeneration), 4*replay.MemoGeneration)
}

// MemoHitRate is the share of the counted calls of a load run (spans, one
// per connection, cycling through n items with SourceItem) that a
// replay.Memo of generation gen answered. A negative gen (MemoOff) answers
// none. NaN when no call was counted.
func MemoHitRate(spans []Span, n, gen int) float64 {
	counted := 0
	for _, sp := range spans {
		counted += sp.Counted
	}
	if counted == 0 {
		return math.NaN()
	}
	if gen < 0 {
		return 0
	}
	m := replay.NewMemo(gen)
	req, snap := &provider.Request{}, &check.Snapshot{}
	hits, longest := 0, 0
	for _, sp := range spans {
		longest = max(longest, sp.Sent)
	}
	var digest [32]byte
	for seq := 0; seq < longest; seq++ {
		for c, sp := range spans {
			if seq >= sp.Sent {
				continue
			}
			binary.BigEndian.PutUint64(digest[:], uint64(SourceItem(c, seq, n, len(spans))))
			if _, s := m.Get(digest); s != nil {
				if seq >= sp.First && seq < sp.First+sp.Counted {
					hits++
				}
				continue
			}
			m.Put(digest, req, snap) // a miss of the memo: parsed, keyed, and remembered
		}
	}
	return float64(hits) / float64(counted)
}
