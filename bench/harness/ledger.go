package harness

import (
	"fmt"
	"time"
)

// LedgerRow is `traceforge snapshot stats` and `snapshot tree` (the lean
// read of every file, no hashes) on one set size, next to static verify.
type LedgerRow struct {
	N                   int
	Stats, Tree         time.Duration // medians
	StatsRSS, TreeRSS   int64
	StatsRuns, TreeRuns []time.Duration
}

// runLedger times stats and tree on the cached set of size n (page cache
// warm: static verify has just read it).
func runLedger(cfg *Config, n int) (LedgerRow, error) {
	dir := SetDir(cfg, n)
	row := LedgerRow{N: n}
	for r := 0; r < cfg.rounds(); r++ {
		for _, c := range []struct {
			verb string
			runs *[]time.Duration
			rss  *int64
		}{{"stats", &row.StatsRuns, &row.StatsRSS}, {"tree", &row.TreeRuns, &row.TreeRSS}} {
			wall, rss, out, err := Timed(cfg.Self, cfg.Root, cfg.bin("traceforge"), "snapshot", c.verb, "--dir", dir, "--format", "json")
			if err != nil {
				return row, fmt.Errorf("traceforge snapshot %s: %v: %s", c.verb, err, tail(out))
			}
			*c.runs = append(*c.runs, wall)
			*c.rss = max(*c.rss, rss)
		}
	}
	row.Stats, row.Tree = median(row.StatsRuns), median(row.TreeRuns)
	cfg.logf("ledger %d: stats %s (RSS %d MB), tree %s (RSS %d MB)", n, row.Stats.Round(time.Millisecond), row.StatsRSS>>20, row.Tree.Round(time.Millisecond), row.TreeRSS>>20)
	return row, nil
}

// ledgerTargets: both commands on 100k snapshots in seconds, in bounded memory.
func (r *Results) ledgerTargets() []Target {
	var ts []Target
	for _, l := range r.Ledger {
		if l.N != 100000 {
			continue
		}
		for _, c := range []struct {
			verb string
			wall time.Duration
			rss  int64
		}{{"stats", l.Stats, l.StatsRSS}, {"tree", l.Tree, l.TreeRSS}} {
			ts = append(ts, Target{Name: "snapshot " + c.verb + " wall time at 100000", Want: "≤ 5 s", Got: secs(c.wall), Met: c.wall <= 5*time.Second})
			ts = append(ts, Target{Name: "snapshot " + c.verb + " peak RSS at 100000", Want: "≤ 150 MB", Got: mb(c.rss), Met: c.rss <= 150<<20})
		}
	}
	return ts
}

// ledgerMarkdown renders the stats/tree table.
func (r *Results) ledgerMarkdown(p func(string, ...any)) {
	if len(r.Ledger) == 0 {
		return
	}
	p("")
	p("### Stats and tree (`traceforge snapshot stats|tree --format json`: lean read of every file, no hashes)")
	p("")
	p("| snapshots | stats | tree | stats per snapshot | tree per snapshot | stats peak RSS | tree peak RSS | static verify |")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range r.Ledger {
		verify := ""
		for _, s := range r.Static {
			if s.N == l.N {
				verify = secs(s.Verify)
			}
		}
		p("| %d | %s | %s | %s | %s | %s | %s | %s |", l.N, secs(l.Stats), secs(l.Tree), us(l.Stats/time.Duration(l.N)), us(l.Tree/time.Duration(l.N)), mb(l.StatsRSS), mb(l.TreeRSS), verify)
	}
}
