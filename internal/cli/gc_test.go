package cli

import (
	"runtime/debug"
	"testing"
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

// Loading a served set runs at serveLoadGCPercent; once loaded, the GC
// percent is restored and a soft limit of serveLimit over the live heap
// caps serving; GOGC or GOMEMLIMIT in the environment leave both alone.
func TestServeLoadGCSettings(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(beforeLimit)

	loaded := serveLoadGC(getenv)
	if p := debug.SetGCPercent(serveLoadGCPercent); p != serveLoadGCPercent {
		t.Errorf("GC percent %d while loading, want %d", p, serveLoadGCPercent)
	}
	loaded()
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("GC percent %d when serving, want %d restored", p, before)
	}
	limit := debug.SetMemoryLimit(-1)
	if limit == beforeLimit || limit < 64<<20 || limit > 4<<30 {
		t.Errorf("memory limit %d when serving, want serveLimit of this test's live heap", limit)
	}
	if got := serveLimit(300 << 20); got != 484<<20 {
		t.Errorf("serveLimit(300 MiB) = %d MiB, want 484 MiB (live + 40%% + 64 MiB)", got>>20)
	}
	debug.SetMemoryLimit(beforeLimit)

	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "200"}
		serveLoadGC(getenv)()
		if p := debug.SetGCPercent(before); p != before {
			t.Errorf("%s set: GC percent changed to %d", k, p)
		}
		if got := debug.SetMemoryLimit(-1); got != beforeLimit {
			t.Errorf("%s set: memory limit changed to %d", k, got)
		}
	}
}
