package cli

import (
	"runtime"
	"runtime/debug"
)

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

// serveLoadGCPercent is the GOGC of loading a set that is served (verify
// --serve, verify -- COMMAND): the check allocates ~70 KB per file while
// the kept compact set grows, so with GOGC=100 the heap peaks at twice the
// set; a tighter goal while loading keeps the peak (RSS) near the set's
// size. Serving runs with the previous setting.
const serveLoadGCPercent = 40

// serveLoadGC applies serveLoadGCPercent unless the user set GOGC or
// GOMEMLIMIT, and returns a func that restores the previous setting,
// returns the loading garbage to the OS and sets a soft memory limit of
// serveHeadroom over the loaded set: with GOGC=100 alone the heap of a
// large served set would grow to twice the set between collections.
func serveLoadGC(getenv func(string) string) (loaded func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(serveLoadGCPercent)
	return func() {
		runtime.GC()
		debug.SetGCPercent(old)
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		debug.SetMemoryLimit(int64(serveLimit(ms.HeapAlloc)))
	}
}

// serveLimit is the soft memory limit of serving a set whose live heap is
// live bytes: 40% over it plus 64 MiB for the requests in flight.
func serveLimit(live uint64) uint64 { return live + live*2/5 + 64<<20 }
