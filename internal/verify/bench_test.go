package verify

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

var (
	replaySet  = flag.String("replayset", "", "BenchmarkReplayHTTP: serve this generated chat set instead of a fresh one")
	replayN    = flag.Int("replayn", 1000, "BenchmarkReplayHTTP: the number of snapshots in -replayset")
	replayMemo = flag.Int("replaymemo", 0, "BenchmarkReplayHTTP: ReplayOptions.MemoGeneration (-1: no memo, every request is parsed: the cold path)")
)

// BenchmarkReplayHTTP drives the real replay server (serve.Guard around
// ReplayServer over a served 1,000-snapshot set, as `verify --serve` runs
// it) over loopback HTTP with 32 keep-alive clients, plain and streamed,
// for every generated kind. Its CPU profile, focused on
// ReplayServer.ServeHTTP or net/http.(*conn).serve, is the server's side
// of `tfbench run -only replay,formats`:
//
//	go test -run '^$' -bench ReplayHTTP -cpuprofile cpu.prof ./internal/verify
//
// -replayset DIR -replayn N serve an existing generated chat set of N
// snapshots instead (e.g. tfbench's cached 100,000-snapshot set);
// -replaymemo -1 measures the cold path (no memo).
func BenchmarkReplayHTTP(b *testing.B) {
	n, kinds := 1000, gen.Kinds
	if *replaySet != "" {
		n, kinds = *replayN, []gen.Kind{gen.Chat}
	}
	for _, kind := range kinds {
		dir := *replaySet
		if dir == "" {
			dir = b.TempDir()
			if _, err := kind.WriteSet(dir, n); err != nil {
				b.Fatal(err)
			}
		}
		served := replay.NewEntries(dir)
		_, set, err := Static(StaticOptions{Dir: dir, Serve: served})
		if err != nil || !set.Valid() {
			b.Fatalf("%s: %v %v", kind, err, set.Findings)
		}
		rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: "set", MemoGeneration: *replayMemo})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := serve.Start(ln, serve.Guard(rs.Handler(), nil, Refuse))
		base := "http://" + ln.Addr().String()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
		for _, stream := range []bool{false, true} {
			reqs := make([]gen.Request, n)
			for i := range reqs {
				reqs[i] = kind.HTTPRequest(i, stream)
			}
			mode := "plain"
			if stream {
				mode = "stream"
			}
			b.Run(fmt.Sprintf("%s/%s", kind, mode), func(b *testing.B) {
				var next atomic.Int64
				gc0 := gcCPU()
				stop := snapshottest.ReportCPU(b) // client and server: both share the process
				b.SetParallelism(16)              // 32 clients on 2 CPUs, like tfbench
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						r := reqs[int(next.Add(1))%len(reqs)]
						hr, err := http.NewRequest(http.MethodPost, base+r.Path, bytes.NewReader(r.Body))
						if err != nil {
							b.Error(err)
							return
						}
						hr.Header = r.Header.Clone()
						hr.Header.Set("Content-Type", "application/json")
						resp, err := client.Do(hr)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Errorf("%s %s: status %d", kind, mode, resp.StatusCode)
							return
						}
					}
				})
				stop()
				b.ReportMetric(float64((gcCPU()-gc0).Nanoseconds())/float64(b.N), "gc-ns/op")
			})
		}
		client.CloseIdleConnections()
		srv.Stop(0)
	}
}

// gcCPU is the CPU time the garbage collector has used so far, without the
// mark work done on otherwise idle CPUs (client and server share the
// process).
func gcCPU() time.Duration {
	m := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(m)
	return time.Duration((m[0].Value.Float64() - m[1].Value.Float64()) * float64(time.Second))
}
