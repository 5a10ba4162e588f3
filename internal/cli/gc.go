package cli

import "runtime/debug"

// Garbage-collector settings of a static-only verify (BENCHMARKS.md): its
// live heap is small (a lean set: ids, keys and hashes) while it allocates
// ~70 KB per file checked, so the default GOGC=100 collects very often.
// It lets the heap grow to staticGCPercent over the live heap, capped by a
// soft limit of staticMemLimit, which keeps the peak under ~200 MB at 100k
// snapshots.
const (
	staticGCPercent = 400
	staticMemLimit  = 150 << 20
)

// staticGC applies those settings unless the user set GOGC or GOMEMLIMIT
// (theirs win), and returns a func restoring the previous ones.
func staticGC(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oldLimit := debug.SetMemoryLimit(staticMemLimit)
	oldPercent := debug.SetGCPercent(staticGCPercent)
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}
