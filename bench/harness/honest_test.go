package harness

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
)

// Issue 29's rules for an honest `make bench`, each checked so that
// breaking it fails a test: odd rounds and the true median, the memo hit
// rate of every replay row (and targets on cold rows only, formats_test.go),
// and record rows that fail unless files written equal calls answered.

func TestOddRoundsTrueMedian(t *testing.T) {
	for r, want := range map[int]int{-1: 1, 0: 1, 1: 1, 2: 3, 3: 3, 4: 5} {
		if got := OddRounds(r); got != want {
			t.Errorf("OddRounds(%d) = %d, want %d", r, got, want)
		}
	}
	if got := median([]time.Duration{5, 1, 3}); got != 3 {
		t.Errorf("median(5, 1, 3) = %v, want 3", got)
	}
	rs := []ReplayRow{{CPUPerReq: 5, Server: "a"}, {CPUPerReq: 1, Server: "b"}, {CPUPerReq: 3, Server: "c"}}
	if got := PickMedianRound(rs); got.Server != "c" {
		t.Errorf("PickMedianRound picked %s (%v), want the middle round c", got.Server, got.CPUPerReq)
	}
	// Of an even number (never run), a measured round, not the lowest.
	if got := PickMedianRound(rs[:2]); got.Server != "a" {
		t.Errorf("PickMedianRound of 2 picked %s, want the upper one", got.Server)
	}
}

// TestStaticRoundsAreOddAtEverySize: static verify at 100k runs as many
// rounds as the smaller sets (3, not 2), alternating with the floor, and
// keeps each program's middle run. A fake tfbench reports run k as k µs.
func TestStaticRoundsAreOddAtEverySize(t *testing.T) {
	tmp := t.TempDir()
	counter := filepath.Join(tmp, "count")
	self := filepath.Join(tmp, "fake-tfbench")
	script := "#!/bin/sh\nc=$(cat " + counter + " 2>/dev/null || echo 0)\nc=$((c+1))\necho $c > " + counter + "\necho \"" + RusagePrefix + "${c}000 1024\" >&2\n"
	if err := os.WriteFile(self, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Root: tmp, Self: self, Work: tmp, Rounds: 2}
	const n = 100000
	marker := filepath.Join(filepath.Dir(SetDir(cfg, n)), "complete")
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte("123"), 0o644); err != nil { // a cached set: nothing generated
		t.Fatal(err)
	}
	row, err := runStatic(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	// Run 1 warms the cache (floor); then verify 2, floor 3, verify 4, floor 5, verify 6, floor 7.
	if len(row.VerifyRuns) != 3 || len(row.FloorRuns) != 3 {
		t.Fatalf("%d verify and %d floor runs at %d, want 3 each (Rounds 2 made odd)", len(row.VerifyRuns), len(row.FloorRuns), n)
	}
	if row.Verify != 4*time.Microsecond || row.Floor != 5*time.Microsecond {
		t.Errorf("medians verify %v, floor %v; want the middle runs 4µs and 5µs", row.Verify, row.Floor)
	}
}

// TestMemoHitRate: the hit rate comes from replay's own memo over the
// load's calls: all hits once a small set has been seen, none when the set
// has more distinct requests than the memo holds, none with the memo off.
func TestMemoHitRate(t *testing.T) {
	spans := func(conns, sent, first int) []Span {
		s := make([]Span, conns)
		for i := range s {
			s[i] = Span{Sent: sent, First: first, Counted: sent - first}
		}
		return s
	}
	// 1k set: 32 connections × 1,000 calls of warm-up cover it; then all hits.
	if got := MemoHitRate(spans(32, 4000, 1000), 1000, ServerMemoGeneration(1000)); got != 1 {
		t.Errorf("1k set, warm: hit rate %v, want 1", got)
	}
	// 12k set: one generation holds it: all hits from the second pass on.
	if got := MemoHitRate(spans(32, 1500, 750), 12000, ServerMemoGeneration(12000)); got != 1 {
		t.Errorf("12k set, second pass: hit rate %v, want 1", got)
	}
	// 20k set: more than a generation (16,384), less than two: each
	// rotation drops the requests not yet seen again — some hits, not all.
	if got := MemoHitRate(spans(32, 2500, 1250), 20000, ServerMemoGeneration(20000)); got <= 0.5 || got >= 1 {
		t.Errorf("20k set, second pass: hit rate %v, want some but not all", got)
	}
	// 100k set: every request comes again only after the memo has forgotten it.
	if got := MemoHitRate(spans(32, 9000, 3000), 100000, ServerMemoGeneration(100000)); got != 0 {
		t.Errorf("100k set: hit rate %v, want 0 (more distinct requests than the memo holds)", got)
	}
	// 40k set, cycled more than twice: still cold (40,000 > 32,768).
	if got := MemoHitRate(spans(32, 4000, 1000), 40000, ServerMemoGeneration(40000)); got != 0 {
		t.Errorf("40k set: hit rate %v, want 0", got)
	}
	if got := MemoHitRate(spans(32, 4000, 1000), 1000, MemoOff); got != 0 {
		t.Errorf("memo off: hit rate %v, want 0", got)
	}
	if got := MemoHitRate(spans(2, 10, 10), 1000, 4096); !math.IsNaN(got) {
		t.Errorf("no counted call: %v, want NaN", got)
	}
	// The load sends every distinct request of a large set before repeating
	// one (no cap on the distinct requests it prepares).
	seen := map[int]bool{}
	const n, conns = 100000, 32
	for seq := 0; len(seen) < n && seq < n; seq++ {
		for c := 0; c < conns; c++ {
			seen[SourceItem(c, seq, n, conns)] = true
		}
	}
	if len(seen) != n {
		t.Errorf("the load cycling through %d items sent %d distinct requests", n, len(seen))
	}
}

// TestLoadSpansAndAnswered: a load run reports every 2xx answer (warm-up
// and the calls after the window included) and, per connection, the calls
// it sent and those counted in the window.
func TestLoadSpansAndAnswered(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	res := RunLoad(LoadConfig{Addr: host, Conns: 3, Warmup: 50 * time.Millisecond, Duration: 150 * time.Millisecond,
		Source: func(c, seq int) []byte {
			return RawRequest(host, gen.Request{Path: "/x/" + strconv.Itoa(c), Body: []byte("{}")}, nil)
		}})
	if res.Answered != served.Load() || res.Answered <= res.Requests {
		t.Errorf("answered %d, server served %d, counted in the window %d", res.Answered, served.Load(), res.Requests)
	}
	counted, sent := 0, 0
	for _, sp := range res.Spans {
		counted += sp.Counted
		sent += sp.Sent
		if sp.First <= 0 || sp.First+sp.Counted > sp.Sent {
			t.Errorf("span %+v: the window must start after warm-up calls and end by the last one sent", sp)
		}
	}
	if len(res.Spans) != 3 || int64(counted) != res.Requests+res.Errors || int64(sent) != res.Answered {
		t.Errorf("spans %+v: %d counted, %d sent; result %+v", res.Spans, counted, sent, res)
	}
}

// TestRecordRowsNeedEveryFile: the record targets are missed when record
// wrote fewer (or more) files than the calls it answered.
func TestRecordRowsNeedEveryFile(t *testing.T) {
	rec := func(files, answered, latFiles int) *Results {
		return &Results{Config: Config{Conns: 32}, Record: &RecordResult{
			DirectP50: time.Millisecond, ProxyP50: 1300 * time.Microsecond,
			Throughput:   LoadResult{RPS: 1500, Answered: int64(answered)},
			FilesWritten: files, LatencyFiles: latFiles, LatencyCalls: 2000,
		}}
	}
	met := func(r *Results, prefix string) (bool, string) {
		for _, tg := range r.Targets() {
			if strings.HasPrefix(tg.Name, prefix) {
				return tg.Met, tg.Got
			}
		}
		t.Fatalf("no target %q", prefix)
		return false, ""
	}
	if ok, got := met(rec(7000, 7000, 2000), "record calls/s"); !ok || got != "1500 (7000 files / 7000 answers)" {
		t.Errorf("every file written: met %v, %q", ok, got)
	}
	if ok, _ := met(rec(6999, 7000, 2000), "record calls/s"); ok {
		t.Error("a missing file: the throughput target was met")
	}
	if ok, _ := met(rec(0, 0, 2000), "record calls/s"); ok {
		t.Error("nothing answered, nothing written: the throughput target was met")
	}
	if ok, _ := met(rec(7000, 7000, 2000), "record added p50"); !ok {
		t.Error("every latency file written: the latency target was missed")
	}
	if ok, got := met(rec(7000, 7000, 1990), "record added p50"); ok || !strings.Contains(got, "1990 files / 2000 calls") {
		t.Errorf("missing latency files: met %v, %q", ok, got)
	}
}
