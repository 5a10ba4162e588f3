package harness

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/verify"
)

// TestFormatsFloorMatchesReplay: for every FormatKinds set (Responses,
// Gemini, and the Anthropic and Bedrock sets stored as their streams'
// events), the floor sends the very bytes (and Content-Type) traceforge
// replay sends, plain and streamed, and the load generator runs error-free
// against replay with their calls (Bedrock's signed).
func TestFormatsFloorMatchesReplay(t *testing.T) {
	const n = 6
	for _, kind := range FormatKinds {
		t.Run(string(kind), func(t *testing.T) {
			_, floor, tf := floorAndReplay(t, kind, n)
			streamType := gen.FormatOf(kind.Item(0)).StreamContentType()
			for _, i := range []int{0, 1, n - 1} {
				for _, stream := range []bool{false, true} {
					r := kind.HTTPRequest(i, stream)
					a, actype := postCT(t, floor.URL+r.Path, r)
					b, bctype := postCT(t, tf.URL+r.Path, r)
					if !bytes.Equal(a, b) || actype != bctype {
						t.Errorf("item %d stream=%v: floor (%s) and replay (%s) differ:\n%s\n---\n%s", i, stream, actype, bctype, a, b)
					}
					if stream != (bctype == streamType) {
						t.Errorf("item %d stream=%v: replay answered %s", i, stream, bctype)
					}
				}
			}
			host := strings.TrimPrefix(tf.URL, "http://")
			res := RunLoad(LoadConfig{Addr: host, Conns: 2, Warmup: 20 * time.Millisecond, Duration: 150 * time.Millisecond,
				Source: KindSource(host, kind, n, true, 2)})
			if res.Requests == 0 || res.Errors > 0 {
				t.Errorf("load of %s streams: %+v", kind, res)
			}
		})
	}
}

// TestFormatTargets: the format rows get a CPU/request target each, met at
// ≤ 1.5× the floor and missed above it or with errors, and a run of the
// format rows alone renders without the static verify table.
func TestFormatTargets(t *testing.T) {
	row := func(kind gen.Kind, mode, server string, cpu time.Duration, errs int64) ReplayRow {
		return ReplayRow{N: 1000, Mode: FormatMode(kind, mode), Server: server, CPUPerReq: cpu, LoadResult: LoadResult{RPS: 100, Errors: errs}, MemoHits: math.NaN()}
	}
	warm := row(gen.Responses, "stream", "traceforge", 20*time.Microsecond, 0)
	warm.MemoHits = 1
	res := &Results{Config: Config{PeerN: 1000, Conns: 32, Command: "bin/tfbench run -only formats"}, Replay: []ReplayRow{
		row(gen.Responses, "plain", "floor", 10*time.Microsecond, 0), row(gen.Responses, "plain", ColdServer, 30*time.Microsecond, 0),
		row(gen.Responses, "stream", "floor", 100*time.Microsecond, 0), row(gen.Responses, "stream", ColdServer, 150*time.Microsecond, 0), warm,
		row(gen.Gemini, "stream", "floor", 100*time.Microsecond, 0), row(gen.Gemini, "stream", ColdServer, 120*time.Microsecond, 3),
		row(gen.Wire, "stream", "floor", 80*time.Microsecond, 0), row(gen.Wire, "stream", ColdServer, 100*time.Microsecond, 0),
		row(gen.Bedrock, "plain", "floor", 20*time.Microsecond, 0), row(gen.Bedrock, "plain", ColdServer, 40*time.Microsecond, 0),
	}}
	for i := range res.Replay {
		if res.Replay[i].Server == ColdServer {
			res.Replay[i].MemoHits = 0
		}
	}
	md := res.Markdown()
	for _, want := range []string{
		"| cold Responses plain replay CPU/request vs floor (1000, memo off) | ≤ 1.5× | 3.00× | ❌ missed |",
		"| cold Responses stream replay CPU/request vs floor (1000, memo off) | ≤ 1.5× | 1.50× | ✅ met |",
		"| cold Gemini stream replay CPU/request vs floor (1000, memo off) | ≤ 1.5× | 1.20× | ❌ missed |",
		"| 1000 | responses stream | **traceforge, memo off** (cold) | 0.0% | 100 |",
		"| 1000 | responses stream | traceforge | 100.0% | 100 |",
		"| cold Anthropic (stored as events) stream replay CPU/request vs floor (1000, memo off) | ≤ 1.5× | 1.25× | ✅ met |",
		"| cold Bedrock Converse (stored as events) plain replay CPU/request vs floor (1000, memo off) | ≤ 1.5× | 2.00× | ❌ missed |",
		"`wire` are Anthropic messages and `bedrock` Bedrock Converse calls",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// The memo answered the warm row's calls: it carries no target.
	for _, tg := range res.Targets() {
		if strings.Contains(tg.Name, "memo on") {
			t.Errorf("the memo-served row got a target: %+v", tg)
		}
	}
	if strings.Contains(md, "Static verify") || strings.Contains(md, "Gemini plain replay") {
		t.Errorf("report of the format rows alone shows static verify or a target without rows:\n%s", md)
	}
}

// floorAndReplay serves items [0, n) of kind from the floor (streams on)
// and from traceforge replay of the generated set (checkedSet); both close
// with the test.
func floorAndReplay(t *testing.T, kind gen.Kind, n int) (dir string, floor, tf *httptest.Server) {
	t.Helper()
	dir, set := checkedSet(t, kind, n)
	fh, err := FloorHandler(kind, n, true)
	if err != nil {
		t.Fatal(err)
	}
	floor = httptest.NewServer(fh)
	t.Cleanup(floor.Close)
	tf = httptest.NewServer(verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"}).Handler())
	t.Cleanup(tf.Close)
	return dir, floor, tf
}

// checkedSet generates items [0, n) of kind and checks them as verify
// does: the set must pass every static check.
func checkedSet(t *testing.T, kind gen.Kind, n int) (string, *check.SetResult) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	if _, err := kind.WriteSet(dir, n); err != nil {
		t.Fatal(err)
	}
	rep, set, err := verify.Static(verify.StaticOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 || len(rep.Checked) != n {
		t.Fatalf("generated %s set: %d checked, findings %v", kind, len(rep.Checked), rep.Findings)
	}
	return dir, set
}

func postCT(t *testing.T, url string, r gen.Request) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v %s", url, resp.StatusCode, err, b)
	}
	return b, resp.Header.Get("Content-Type")
}

// TestColdReplayTarget: replay targets go to cold rows only — the memo-off
// server's, and a memo-on server's whose memo answered none of its calls
// (more distinct requests than it holds) — never to a row the memo served.
func TestColdReplayTarget(t *testing.T) {
	row := func(n int, server string, cpu time.Duration, hits float64) ReplayRow {
		return ReplayRow{N: n, Mode: "plain", Server: server, CPUPerReq: cpu, LoadResult: LoadResult{RPS: 100}, MemoHits: hits}
	}
	res := &Results{Config: Config{PeerN: 1000, Conns: 32}, Replay: []ReplayRow{
		row(1000, "floor", 10*time.Microsecond, math.NaN()), row(1000, "traceforge", 9*time.Microsecond, 0.998), row(1000, ColdServer, 16*time.Microsecond, 0),
		row(100000, "floor", 10*time.Microsecond, math.NaN()), row(100000, "traceforge", 14*time.Microsecond, 0), row(100000, ColdServer, 13*time.Microsecond, 0),
	}}
	md := res.Markdown()
	for _, want := range []string{
		"| cold replay plain CPU/request vs floor (1000, memo off) | ≤ 1.5× | 1.60× | ❌ missed |",
		"| cold replay plain CPU/request vs floor (100000, memo off) | ≤ 1.5× | 1.30× | ✅ met |",
		"| cold replay plain CPU/request vs floor (100000, memo on, 0% hits) | ≤ 1.5× | 1.40× | ✅ met |",
		"| 1000 | plain | **traceforge, memo off** (cold) | 0.0% | 100 |",
		"| 1000 | plain | traceforge | 99.8% | 100 |",
		"| 1000 | plain | floor | — | 100 |",
		"| 100000 | plain | **traceforge** (cold) | 0.0% | 100 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Format rows") {
		t.Errorf("report of chat rows explains format rows:\n%s", md)
	}
	for _, tg := range res.Targets() {
		if strings.Contains(tg.Name, "(1000, memo on") || tg.Got == "0.90×" {
			t.Errorf("the memo-served row at 1000 got a target: %+v", tg)
		}
	}
}
