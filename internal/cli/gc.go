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

// ledgerMemLimit is the soft memory limit of snapshot tree and stats: their
// live heap is small (~0.5 KB per snapshot: 49 MB at 100k) but the lean read
// allocates per file, so with the default settings the heap peaked at four
// times that (200 MB RSS at 100k); under this limit the collector runs
// before the garbage piles up (125 MB RSS at 100k, same wall time).
const ledgerMemLimit = 100 << 20

// ledgerGC applies ledgerMemLimit unless the user set GOGC or GOMEMLIMIT,
// and returns a func restoring the previous limit.
func ledgerGC(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(ledgerMemLimit)
	return func() { debug.SetMemoryLimit(old) }
}
