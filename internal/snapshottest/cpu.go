package snapshottest

import (
	"syscall"
	"testing"
	"time"
)

// ReportCPU reports the process's CPU time (user + system) per op as
// "cpu-ns/op" when the returned func is called; unlike ns/op it does not
// grow when other processes share the machine, and it counts the work of
// every goroutine (background refills, flushes, the server side of a call).
func ReportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}
