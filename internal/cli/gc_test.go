package cli

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

// A static-only verify lets the heap grow further between collections, under
// a soft memory limit, and puts the settings back; GOGC or GOMEMLIMIT set
// by the user leave the runtime's settings alone.
func TestStaticGCSettings(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(-1)

	restore := staticGC(getenv)
	if got := debug.SetMemoryLimit(-1); got != staticMemLimit {
		t.Errorf("memory limit %d during static verify, want %d", got, staticMemLimit)
	}
	p := debug.SetGCPercent(staticGCPercent)
	if p != staticGCPercent {
		t.Errorf("GC percent %d during static verify, want %d", p, staticGCPercent)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != beforeLimit {
		t.Errorf("memory limit %d after, want %d restored", got, beforeLimit)
	}
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("GC percent %d after, want %d restored", p, before)
	}

	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "200"}
		restore := staticGC(getenv)
		if got := debug.SetMemoryLimit(-1); got != beforeLimit {
			t.Errorf("with %s set the memory limit changed to %d", k, got)
		}
		restore()
	}
}

// snapshot tree and stats run under a soft memory limit, put it back, and
// leave the runtime alone when the user set GOGC or GOMEMLIMIT.
func TestLedgerGCSettings(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	beforeLimit := debug.SetMemoryLimit(-1)
	restore := ledgerGC(getenv)
	if got := debug.SetMemoryLimit(-1); got != ledgerMemLimit {
		t.Errorf("memory limit %d during tree/stats, want %d", got, ledgerMemLimit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != beforeLimit {
		t.Errorf("memory limit %d after, want %d restored", got, beforeLimit)
	}
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "200"}
		restore := ledgerGC(getenv)
		if got := debug.SetMemoryLimit(-1); got != beforeLimit {
			t.Errorf("with %s set the memory limit changed to %d", k, got)
		}
		restore()
	}
}

// Loading a served set runs at serveLoadGCPercent; once loaded, serving
// runs at serveGCPercent of the live heap (at most the previous percent);
// GOGC or GOMEMLIMIT in the environment leave the settings alone.
func TestServeLoadGCSettings(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	defer debug.SetGCPercent(before)

	loaded := serveLoadGC(getenv)
	if p := debug.SetGCPercent(serveLoadGCPercent); p != serveLoadGCPercent {
		t.Errorf("GC percent %d while loading, want %d", p, serveLoadGCPercent)
	}
	loaded()
	if p := debug.SetGCPercent(before); p <= serveLoadGCPercent || p > before {
		t.Errorf("GC percent %d when serving, want in (%d, %d]", p, serveLoadGCPercent, before)
	}
	for _, c := range []struct {
		live      uint64
		old, want int
	}{{320 << 20, 100, 40}, {6400 << 20, 100, 30}, {1 << 20, 100, 100}, {1 << 20, -1, 3230}, {320 << 20, 35, 35}} {
		if got := serveGCPercent(c.live, c.old); got != c.want {
			t.Errorf("serveGCPercent(%d MiB, %d) = %d, want %d", c.live>>20, c.old, got, c.want)
		}
	}
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "200"}
		serveLoadGC(getenv)()
		if p := debug.SetGCPercent(before); p != before {
			t.Errorf("%s set: GC percent changed to %d", k, p)
		}
	}
}

// record grows the heap by recordHeadroom (at least 100%) over the loaded
// set between collections, puts the previous percent back, and leaves the
// runtime alone when the user set GOGC or GOMEMLIMIT.
func TestRecordGCSettings(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	defer debug.SetGCPercent(before)

	restore := recordGC(getenv)
	p := debug.SetGCPercent(before)
	if p < 100 {
		t.Errorf("GC percent %d while recording, want ≥ 100", p)
	}
	debug.SetGCPercent(p)
	restore()
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("GC percent %d after, want %d restored", p, before)
	}
	for _, c := range []struct {
		live uint64
		want int
	}{{4 << 20, 200}, {2 << 20, 400}, {8 << 20, 100}, {1 << 30, 100}, {0, 838860800}} {
		if got := recordGCPercent(c.live); got != c.want {
			t.Errorf("recordGCPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "200"}
		recordGC(getenv)()
		if p := debug.SetGCPercent(before); p != before {
			t.Errorf("%s set: GC percent changed to %d", k, p)
		}
	}
}

// record sets its GC percent again as its live heap grows: a percent taken
// from the small heap at start would let a long run's heap reach many
// times its live size between collections.
func TestRecordGCRetunesAsTheHeapGrows(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	defer debug.SetGCPercent(before)
	var mu sync.Mutex
	var set []int
	setGCPercent = func(p int) int {
		mu.Lock()
		set = append(set, p)
		mu.Unlock()
		return debug.SetGCPercent(p)
	}
	defer func() { setGCPercent = debug.SetGCPercent }()
	settings := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), set...)
	}

	runtime.GC()
	small := recordGCPercent(liveHeap())
	if small <= 100 {
		t.Skipf("the test binary's live heap (%d bytes) is already over the headroom", liveHeap())
	}
	restore := recordGCEvery(func(string) string { return "" }, 5*time.Millisecond)
	grown := make([]byte, 8*recordHeadroom) // live: the percent must fall to 100
	for i := range grown {
		grown[i] = byte(i)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := settings()
		if s[0] <= 100 {
			t.Fatalf("first setting %d, want over 100 for a small heap", s[0])
		}
		if s[len(s)-1] == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GC percent never retuned to 100 with %d MiB live: settings %v", len(grown)>>20, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	runtime.KeepAlive(grown)
	restore()
	s := settings()
	if s[len(s)-1] != before {
		t.Errorf("last setting %d, want the previous %d restored", s[len(s)-1], before)
	}
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("GC percent %d after restore, want %d", p, before)
	}
}
