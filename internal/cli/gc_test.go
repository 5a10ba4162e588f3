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
