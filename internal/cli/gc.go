package cli

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
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
	if userTunesGC(getenv) {
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
	if userTunesGC(getenv) {
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
// GOMEMLIMIT, and returns a func to call once the set is loaded: it
// returns the loading garbage to the OS and sets the GC percent of serving
// (serveGCPercent of the loaded heap). With GOGC=100 the heap of a large
// served set would grow to twice the set between collections; a percent
// (not a memory limit) keeps the heap proportional as kept streams grow,
// without a collector that runs flat out near a limit.
func serveLoadGC(getenv func(string) string) (loaded func()) {
	if userTunesGC(getenv) {
		return func() {}
	}
	old := debug.SetGCPercent(serveLoadGCPercent)
	return func() {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		debug.SetGCPercent(serveGCPercent(ms.HeapAlloc, old))
	}
}

// serveGCPercent is the GC percent of serving a set whose live heap is
// live bytes: the heap may grow 30% plus 32 MiB (the requests in flight)
// over it, never more than the previous setting old allowed.
func serveGCPercent(live uint64, old int) int {
	p := 30 + int(32<<20*100/max(live, 1))
	if old >= 0 && p > old {
		return old
	}
	return p
}

// recordHeadroom is how far record lets the heap grow over the loaded set
// between collections (at least 100%). Each recorded call allocates ~35 KB
// that is garbage once its snapshot is written (BenchmarkRecordCallBench's
// memory profile); with GOGC=100 over a small set the collector ran every
// few dozen calls (15–25% of record's CPU at 32 clients). 8 MiB keeps
// collections a couple of hundred calls apart, and keeps the heap small
// enough to be reused: with 64 MiB a run of a few thousand calls only ever
// touched fresh pages (10 page faults per call, each zeroing a page) and
// cycled through more memory than the CPU caches hold; 16 MiB still took 8
// faults per call over 1,200 calls, 8 MiB takes 5. BENCHMARKS.md "record"
// has the A/B runs: the same calls/s at 32 clients, a lower added latency.
const recordHeadroom = 8 << 20

// recordGC sets record's GC percent from the live heap once the set is
// loaded (recordGCPercent), unless the user set GOGC or GOMEMLIMIT, and
// sets it again every recordGCRetune from the live heap then: a percent
// is relative, so one taken from the small heap at start would let the
// heap of a long run, grown with its calls, reach many times its live
// size between collections. It returns a func that stops the retuning and
// restores the previous percent.
func recordGC(getenv func(string) string) (restore func()) {
	return recordGCEvery(getenv, recordGCRetune)
}

// recordGCRetune is how often record sets its GC percent again.
const recordGCRetune = time.Second

// setGCPercent is debug.SetGCPercent (tests watch the settings).
var setGCPercent = debug.SetGCPercent

func recordGCEvery(getenv func(string) string, every time.Duration) (restore func()) {
	if userTunesGC(getenv) {
		return func() {}
	}
	runtime.GC()
	old := setGCPercent(recordGCPercent(liveHeap()))
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				setGCPercent(recordGCPercent(liveHeap()))
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		setGCPercent(old)
	}
}

// liveHeap is the heap the last collection found live (runtime/metrics;
// no stop-the-world, unlike runtime.ReadMemStats).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// recordGCPercent lets a heap of live bytes grow by recordHeadroom or by
// itself, whichever is more.
func recordGCPercent(live uint64) int {
	return max(100, int(recordHeadroom*100/max(live, 1)))
}

// userTunesGC reports whether the user set GOGC or GOMEMLIMIT: their
// settings win over every setting of this file.
func userTunesGC(getenv func(string) string) bool {
	return getenv("GOGC") != "" || getenv("GOMEMLIMIT") != ""
}
