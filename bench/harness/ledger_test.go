package harness

import (
	"strings"
	"testing"
	"time"
)

// The stats/tree rows reach the report and the 100k targets.
func TestLedgerReport(t *testing.T) {
	res := &Results{
		Static: []StaticRow{{N: 100000, Verify: 30 * time.Second, Floor: 10 * time.Second}},
		Ledger: []LedgerRow{{N: 100000, Stats: 3 * time.Second, Tree: 6 * time.Second, StatsRSS: 80 << 20, TreeRSS: 160 << 20}},
	}
	md := res.Markdown()
	for _, want := range []string{
		"| snapshot stats wall time at 100000 | ≤ 5 s | 3.00 s | ✅ met |",
		"| snapshot tree wall time at 100000 | ≤ 5 s | 6.00 s | ❌ missed |",
		"| snapshot stats peak RSS at 100000 | ≤ 150 MB | 80 MB | ✅ met |",
		"| snapshot tree peak RSS at 100000 | ≤ 150 MB | 160 MB | ❌ missed |",
		"| 100000 | 3.00 s | 6.00 s | 30.0 µs | 60.0 µs | 80 MB | 160 MB | 30.00 s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
