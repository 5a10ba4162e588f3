package ledger_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// BenchmarkReadEntry: the lean read of one realistic file (bench/gen), per
// provider, next to the full static check of the same bytes.
func BenchmarkReadEntry(b *testing.B) {
	for _, i := range []int{0, 1} {
		it := gen.Item(i)
		rel, data, err := snapshottest.File(it)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(it.Provider+"/lean", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var e ledger.Entry
			for b.Loop() {
				if err := ledger.ReadEntry(data, it.Provider, ledger.ReadOptions{Conversation: true}, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(it.Provider+"/full-check", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if s, fs := check.CheckBytes(rel, data, check.Options{}); s == nil || fs.Errors() > 0 {
					b.Fatal(fs)
				}
			}
		})
	}
}

// BenchmarkLedgerSet: stats and tree of a whole generated set on disk
// (bench/gen; every record has lineage, so the tree links 2 conversations
// per parent pair), reported per snapshot and with the heap in use after
// the load. N is 1,000 unless TRACEFORGE_LEDGER_N says otherwise;
// TRACEFORGE_LEDGER_DIR reuses a set generated earlier (make bench caches
// its sets in $TMPDIR/traceforge-bench/<gen.Version>-<N>/.ai-snapshots,
// e.g. g1-1.1.0-10000).
func BenchmarkLedgerSet(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("TRACEFORGE_LEDGER_N")); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("TRACEFORGE_LEDGER_DIR")
	if dir == "" {
		dir = b.TempDir()
		if _, err := gen.WriteSet(dir, n); err != nil {
			b.Fatal(err)
		}
	}
	st := &snapshot.Store{Dir: dir}
	for _, mode := range []string{"stats", "tree"} {
		b.Run(mode, func(b *testing.B) {
			var heap uint64
			for b.Loop() {
				// As the commands do: stats tallies while reading, tree keeps entries.
				var entries []ledger.Entry
				tally := ledger.NewTally("model")
				keep := tally.Add
				if mode == "tree" {
					keep = func(e *ledger.Entry) { entries = append(entries, *e) }
				}
				problems, err := ledger.Each(st, ledger.ReadOptions{Conversation: mode == "tree"}, keep)
				if err != nil || len(problems) > 0 {
					b.Fatalf("%v %v", err, problems)
				}
				if mode == "stats" {
					if rep := tally.Report(nil); rep.Total.Calls != n {
						b.Fatalf("%d calls of %d", rep.Total.Calls, n)
					}
				} else if f := ledger.BuildForest(entries); len(entries) != n || len(f.Roots) == 0 {
					b.Fatalf("%d entries of %d", len(entries), n)
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = max(heap, ms.HeapInuse)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/snapshot")
			b.ReportMetric(float64(heap)/(1<<20), "MB-heap")
		})
	}
}
