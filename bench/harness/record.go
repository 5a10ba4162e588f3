package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// SourceHeader is sent with every recorded call (record wants to know where
// a call was made).
var SourceHeader = http.Header{"X-Traceforge-Source": {"bench/harness/load.go:1:Load"}}

// Request index bases: every recorded call is a distinct request, so each
// one writes its own snapshot file.
const (
	baseLatency    = 100_000_000
	baseTTFB       = 200_000_000
	baseThroughput = 300_000_000
	baseUpstream   = 400_000_000
	baseStrict     = 500_000_000
	perConn        = 1_000_000
)

// LatencyResult compares calls made directly and through a proxy.
type LatencyResult struct {
	DirectP50, DirectP99, ProxyP50, ProxyP99 time.Duration
	TTFBDirect, TTFBProxy                    time.Duration // medians
}

// Latency alternates blocks of n sequential calls of kind direct and
// through the proxy, rounds times, each call a distinct request from base
// on (signed for its target when the kind's calls are).
func Latency(direct, proxy string, kind gen.Kind, n, rounds, base int, stream bool) (LatencyResult, error) {
	var dt, pt, df, pf []time.Duration
	next := base
	for r := 0; r < rounds; r++ {
		for _, target := range []string{direct, proxy} {
			start := next
			tot, ttfb, err := Sequential(target, n, func(i int) []byte {
				return KindRaw(target, kind, start+i, stream, SourceHeader)
			})
			if err != nil {
				return LatencyResult{}, fmt.Errorf("%s: %w", target, err)
			}
			next += n
			if target == direct {
				dt, df = append(dt, tot...), append(df, ttfb...)
			} else {
				pt, pf = append(pt, tot...), append(pf, ttfb...)
			}
		}
	}
	return LatencyResult{
		DirectP50: Percentile(dt, .5), DirectP99: Percentile(dt, .99),
		ProxyP50: Percentile(pt, .5), ProxyP99: Percentile(pt, .99),
		TTFBDirect: Percentile(df, .5), TTFBProxy: Percentile(pf, .5),
	}, nil
}

type fake struct {
	proc *Proc
	url  string
}

// startFake starts tf-fake-upstream with extra flags.
func startFake(cfg *Config, extra ...string) (*fake, error) {
	return startFakeArgv(cfg, append([]string{cfg.bin("tf-fake-upstream"), "-listen", "127.0.0.1:0"}, extra...))
}

// startFakeBedrock starts the fake Bedrock runtime (tfbench fake-bedrock,
// FakeBedrock): tf-fake-upstream serves no Bedrock route.
func startFakeBedrock(cfg *Config) (*fake, error) {
	return startFakeArgv(cfg, []string{cfg.Self, "fake-bedrock", "-listen", "127.0.0.1:0"})
}

// startFakeArgv starts a fake upstream (pinned to CPU 0) that prints
// FAKE_UPSTREAM_URL=.
func startFakeArgv(cfg *Config, argv []string) (*fake, error) {
	p, err := Start(cfg.Root, nil, Pinned(0, argv...)...)
	if err != nil {
		return nil, err
	}
	u, err := p.WaitLine("FAKE_UPSTREAM_URL=", 30*time.Second)
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return &fake{proc: p, url: u}, nil
}

// startRecord starts record into dir (emptied first) in front of upstream
// for OpenAI and Anthropic, with extra flags.
func startRecord(cfg *Config, dir, upstream string, extra ...string) (*server, error) {
	return startRecordEnv(cfg, dir, nil, append([]string{"--openai-upstream", upstream + "/v1", "--anthropic-upstream", upstream}, extra...)...)
}

// startRecordEnv starts record into dir (emptied first) with env added to
// its environment and args (upstreams and flags).
func startRecordEnv(cfg *Config, dir string, env []string, args ...string) (*server, error) {
	_ = os.RemoveAll(filepath.Dir(dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	argv := Pinned(0, append([]string{cfg.bin("traceforge"), "record", "--dir", dir, "--listen", "127.0.0.1:0"}, args...)...)
	p, err := Start(filepath.Dir(dir), append([]string{"NO_COLOR=1"}, env...), argv...)
	if err != nil {
		return nil, err
	}
	u, err := p.WaitLine("export TRACEFORGE_URL=http://", time.Minute)
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return &server{name: "record", addr: strings.TrimRight(u, "/"), proc: p}, nil
}

func hostOf(u string) string { return strings.TrimRight(strings.TrimPrefix(u, "http://"), "/") }

func runLatency(cfg *Config, direct, proxy string, kind gen.Kind, n, rounds, base int, stream bool) (LatencyResult, error) {
	argv := Pinned(1, cfg.Self, "latency", "-direct", direct, "-proxy", proxy, "-kind", string(kind), "-n", strconv.Itoa(n),
		"-rounds", strconv.Itoa(rounds), "-base", strconv.Itoa(base), "-stream="+strconv.FormatBool(stream))
	_, _, out, err := Timed("", cfg.Root, argv...)
	if err != nil {
		return LatencyResult{}, fmt.Errorf("latency: %v: %s", err, tail(out))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "RESULT ") {
			var r LatencyResult
			err := json.Unmarshal([]byte(strings.TrimPrefix(l, "RESULT ")), &r)
			return r, err
		}
	}
	return LatencyResult{}, fmt.Errorf("latency: no result: %s", tail(out))
}

// countFiles is the number of snapshot files in dir's provider folders.
func countFiles(dir string) int {
	n := 0
	for _, p := range snapshot.Providers() {
		es, _ := os.ReadDir(filepath.Join(dir, p))
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
				n++
			}
		}
	}
	return n
}

func runRecord(cfg *Config) (*RecordResult, error) {
	out := &RecordResult{}
	up, err := startFake(cfg)
	if err != nil {
		return nil, err
	}
	defer up.proc.Stop(5 * time.Second)
	slow, err := startFake(cfg, "-first-byte-delay", "200ms")
	if err != nil {
		return nil, err
	}
	defer slow.proc.Stop(5 * time.Second)

	// Each run records into new folders, removed once the whole run is
	// over (the deletion would slow down the creates of what follows, the
	// Go benchmarks included; fsstate.go).
	scratch, err := os.MkdirTemp(cfg.Work, "record-")
	if err != nil {
		return nil, err
	}
	cfg.atEnd(func() { _ = os.RemoveAll(scratch) })
	if out.CreateCost, out.CreateWait, err = settleCreates(cfg, scratch); err != nil {
		return nil, err
	}
	recDir := filepath.Join(scratch, "fast", ".ai-snapshots")
	rec, err := startRecord(cfg, recDir, up.url)
	if err != nil {
		return nil, err
	}
	n, rounds := 200, 10
	if cfg.Duration < 3*time.Second {
		n, rounds = 100, 4
	}
	if err := recordLoad(cfg, out, up, rec, recDir, gen.Chat, n, rounds); err != nil {
		return nil, err
	}

	// First streamed byte when the upstream waits 200 ms before streaming.
	slowDir := filepath.Join(scratch, "slow", ".ai-snapshots")
	rec2, err := startRecord(cfg, slowDir, slow.url)
	if err != nil {
		return nil, err
	}
	tn := 10
	if cfg.Duration < 3*time.Second {
		tn = 4
	}
	tt, err := runLatency(cfg, hostOf(slow.url), rec2.addr, gen.Chat, tn, 2, baseTTFB, true)
	rec2.proc.Stop(time.Minute)
	if err != nil {
		return nil, err
	}
	out.TTFBDirect, out.TTFBProxy = tt.TTFBDirect, tt.TTFBProxy
	cfg.logf("record first byte (upstream waits 200 ms): direct %s, through record %s", tt.TTFBDirect, tt.TTFBProxy)

	// For comparison (no target): one client with --sync=before-answer,
	// each snapshot fsync'd (file and folder) before the answer's last byte.
	strictDir := filepath.Join(scratch, "strict", ".ai-snapshots")
	rec3, err := startRecord(cfg, strictDir, up.url, "--sync=before-answer")
	if err != nil {
		return nil, err
	}
	st, err := runLatency(cfg, hostOf(up.url), rec3.addr, gen.Chat, n, max(2, rounds/2), baseStrict, false)
	rec3.proc.Stop(time.Minute)
	if err != nil {
		return nil, err
	}
	out.StrictDirectP50, out.StrictP50 = st.DirectP50, st.ProxyP50
	cfg.logf("record --sync=before-answer latency: direct p50 %s, through record p50 %s", st.DirectP50, st.ProxyP50)

	if out.Bedrock, err = runBedrockRecord(cfg, scratch, n, rounds); err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	return out, nil
}

// runBedrockRecord measures record in front of the fake Bedrock runtime
// with Converse calls, each signed by the client for record's host and
// signed again by record, with its own AWS credentials (recordAWSEnv), for
// the fake, which checks every signature: the figures of recordLoad.
func runBedrockRecord(cfg *Config, scratch string, n, rounds int) (*RecordResult, error) {
	up, err := startFakeBedrock(cfg)
	if err != nil {
		return nil, err
	}
	defer up.proc.Stop(5 * time.Second)
	dir := filepath.Join(scratch, "bedrock", ".ai-snapshots")
	rec, err := startRecordEnv(cfg, dir, recordAWSEnv(), "--bedrock-upstream", up.url)
	if err != nil {
		return nil, err
	}
	out := &RecordResult{}
	return out, recordLoad(cfg, out, up, rec, dir, gen.Bedrock, n, rounds)
}

// recordLoad measures rec, recording into recDir in front of up, with
// distinct calls of kind, into out: one client's latency direct and
// through record (n calls a block, rounds block pairs), then cfg.Conns
// clients' calls/s and CPU per call through record — which is stopped
// then, and its files counted — and directly to up.
func recordLoad(cfg *Config, out *RecordResult, up *fake, rec *server, recDir string, kind gen.Kind, n, rounds int) error {
	lat, err := runLatency(cfg, hostOf(up.url), rec.addr, kind, n, rounds, baseLatency, false)
	if err != nil {
		rec.proc.Stop(10 * time.Second)
		return err
	}
	out.DirectP50, out.DirectP99, out.ProxyP50, out.ProxyP99 = lat.DirectP50, lat.DirectP99, lat.ProxyP50, lat.ProxyP99
	// Every call through record is a distinct request, answered 200 (Latency
	// fails otherwise) and renamed into place before its answer's last byte:
	// one file each, already there.
	out.LatencyCalls, out.LatencyFiles = n*rounds, countFiles(recDir)
	cfg.logf("record %s latency: direct p50 %s p99 %s, through record p50 %s p99 %s; %d files for %d calls", kind, lat.DirectP50, lat.DirectP99, lat.ProxyP50, lat.ProxyP99, out.LatencyFiles, out.LatencyCalls)

	// Throughput: cfg.Conns clients, every call distinct, every call a new file.
	before := countFiles(recDir)
	tr, cpu, err := loadAgainst(cfg, rec, "-kind", string(kind), "-distinct", strconv.Itoa(baseThroughput))
	if err != nil {
		rec.proc.Stop(10 * time.Second)
		return err
	}
	out.Throughput, out.CPUPerCall = tr, cpu
	if _, err := rec.proc.Stop(time.Minute); err != nil {
		out.RecordExit = fmt.Sprintf("%v: %s", err, tail(rec.proc.Stderr()))
	}
	out.FilesWritten = countFiles(recDir) - before
	cfg.logf("record %s throughput: %.0f calls/s (%d errors%s), %d calls answered in the run, %d files written", kind, tr.RPS, tr.Errors, firstErr(tr), tr.Answered, out.FilesWritten)
	ur, ucpu, err := loadAgainst(cfg, &server{addr: hostOf(up.url), proc: up.proc}, "-kind", string(kind), "-distinct", strconv.Itoa(baseUpstream))
	if err != nil {
		return err
	}
	out.UpstreamThroughput, out.UpstreamCPUPerCall = ur, ucpu
	return nil
}

// firstErr is ", first: …" for a load result with errors.
func firstErr(r LoadResult) string {
	if r.FirstErr == "" {
		return ""
	}
	return ", first: " + r.FirstErr
}
