package harness

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
)

// TestSmoke runs every piece of the harness in-process on a tiny set, so
// the harness cannot rot: generator → static checks and the static floor,
// the replay floor serving the same bytes as traceforge replay, the load
// generator, the latency probe and the report. No network, no aimock.
func TestSmoke(t *testing.T) {
	const n = 20
	dir, floor, tf := floorAndReplay(t, gen.Chat, n)
	if got, err := FloorVerify(dir); err != nil || got != n {
		t.Fatalf("FloorVerify = %d, %v", got, err)
	}

	host := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	// The floor answers with the very bytes traceforge replay sends.
	for _, i := range []int{0, 1, n - 1} {
		for _, stream := range []bool{false, true} {
			r := gen.HTTPRequest(i, stream)
			a, b := post(t, floor.URL+r.Path, r), post(t, tf.URL+r.Path, r)
			if !bytes.Equal(a, b) {
				t.Errorf("item %d stream=%v: floor and replay bodies differ:\n%s\n---\n%s", i, stream, a, b)
			}
		}
	}

	for _, stream := range []bool{false, true} {
		var opened, closed bool
		res := RunLoad(LoadConfig{Addr: host(tf), Conns: 4, Warmup: 50 * time.Millisecond, Duration: 300 * time.Millisecond,
			Source: SetSource(host(tf), n, stream, 4), OnWindow: func(open bool) { opened, closed = opened || open, closed || !open }})
		if res.Requests == 0 || res.Errors > 0 || !opened || !closed || res.P50 <= 0 || res.P99 < res.P50 {
			t.Errorf("load stream=%v: %+v (window %v/%v)", stream, res, opened, closed)
		}
	}
	lat, err := Latency(host(tf), host(floor), gen.Chat, 3, 1, 0, false)
	if err != nil || lat.DirectP50 <= 0 || lat.ProxyP50 <= 0 {
		t.Errorf("Latency = %+v, %v", lat, err)
	}

	cpu, err := CPUTime(os.Getpid())
	if err != nil || cpu <= 0 {
		t.Errorf("CPUTime = %v, %v", cpu, err)
	}

	res := &Results{
		Config:  Config{Command: "make bench", Conns: 32, PeerN: n},
		Machine: DescribeMachine(),
		Static:  []StaticRow{{N: n, Verify: 2 * time.Second, Floor: time.Second}},
		Replay: []ReplayRow{
			{N: n, Mode: "plain", Server: "floor", LoadResult: LoadResult{RPS: 1000}, CPUPerReq: time.Microsecond},
			{N: n, Mode: "plain", Server: ColdServer, LoadResult: LoadResult{RPS: 800}, CPUPerReq: 2 * time.Microsecond},
		},
		Record: &RecordResult{DirectP50: time.Millisecond, ProxyP50: 1200 * time.Microsecond},
		GoBench: ParseGoBench("pkg: github.com/traceforge/traceforge/internal/replay\nBenchmarkLookup-2   5124021   85.49 ns/op   0 B/op   0 allocs/op\n" +
			"BenchmarkReplayLarge/1MB/stream-2   3   75000000 ns/op   13.88 MB/s   1583352 B/op   76457 allocs/op\n" +
			"BenchmarkReplayLarge/16MB/stream-2   3   1200000000 ns/op   16.07 MB/s   19558821 B/op   1199928 allocs/op\n"),
	}
	if len(res.GoBench) != 3 || res.GoBench[0].NsOp != 85.49 || res.GoBench[0].Pkg != "internal/replay" {
		t.Errorf("ParseGoBench = %+v", res.GoBench)
	}
	md := res.Markdown()
	for _, want := range []string{"| static verify / floor at 20 | ≤ 2.0× | 2.00× | ✅ met |", "| cold replay plain req/s vs floor (20, memo off) | ≥ 0.7× | 0.80× | ✅ met |", "BenchmarkLookup-2",
		"| streamed replay, 16 MB answer vs 1 MB (linear = 16×) | ≤ 24× | 16.0× | ✅ met |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(out, []byte("# Benchmarks\n\nintro\n\n"+BeginMarker+"\nold\n"+EndMarker+"\n\n## Findings\n\nkept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(out, md); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if s := string(b); !strings.Contains(s, "intro") || !strings.Contains(s, "kept") || strings.Contains(s, "\nold\n") || !strings.Contains(s, md) {
		t.Errorf("WriteMarkdown did not replace only the generated part:\n%s", s)
	}
}

func post(t *testing.T, url string, r gen.Request) []byte {
	t.Helper()
	b, _ := postCT(t, url, r)
	return b
}

// TestTimedReadsRusageAfterLongOutput: the wrapper's rusage line is found
// after a program that printed far more than the kept 64 KB of stdout (the
// tree JSON at 100k), so the figures are the program's, not the wrapper's.
func TestTimedReadsRusageAfterLongOutput(t *testing.T) {
	self := filepath.Join(t.TempDir(), "fake-tfbench")
	script := "#!/bin/sh\nshift 2\n\"$@\"\necho \"" + RusagePrefix + "5000 7\" >&2\n"
	if err := os.WriteFile(self, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	wall, rss, _, err := Timed(self, t.TempDir(), "head", "-c", "300000", "/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	if wall != 5000 || rss != 7*1024 {
		t.Errorf("Timed = %v, %d bytes; want the wrapper's line (5µs, 7 KB)", wall, rss)
	}
	self2 := filepath.Join(t.TempDir(), "silent")
	if err := os.WriteFile(self2, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Timed(self2, t.TempDir(), "true"); err == nil {
		t.Error("Timed accepted a wrapper that printed no rusage line")
	}
}
