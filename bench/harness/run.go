// Package harness measures traceforge the way its users feel it, next to a
// floor program and a peer, in one run, as ratios: static verify against a
// read+parse+hash floor, replay against a bare net/http server and aimock,
// and the recording proxy against calling the upstream directly.
//
// The harness drives real processes (bin/traceforge, bin/tf-fake-upstream,
// aimock under node) and its own subcommands (floor programs, load
// generator), pinning servers and the load generator to different CPUs with
// taskset. See BENCHMARKS.md for how to read the figures.
package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
)

// Config is one harness run.
type Config struct {
	Root     string        // repository root (bin/ and bench/aimock live there)
	Self     string        // the tfbench binary, for the floor and load subprocesses
	Work     string        // scratch folder for generated sets (kept between runs)
	Sizes    []int         // set sizes for static verify and replay
	PeerN    int           // set size of the replay comparison with the floor and aimock
	Conns    int           // keep-alive clients
	Warmup   time.Duration // per load run, not counted
	Duration time.Duration // per load run, measured
	Rounds   int           // runs per program and row, the median kept (made odd: Rounds)
	Aimock   bool          // include aimock (needs node and bench/aimock/node_modules)
	GoBench  bool          // run the Go benchmarks
	Command  string        // how the run was started, for the report
	Log      io.Writer
	// Only, when not empty, limits Run to these parts (see Parts); the
	// Markdown of such a run is printed, never written to BENCHMARKS.md.
	Only map[string]bool

	cleanups []func() // run once Run is over (atEnd)
}

// atEnd has f run once Run is over.
func (c *Config) atEnd(f func()) { c.cleanups = append(c.cleanups, f) }

// rounds is how many runs each static, ledger and replay row takes, the
// median kept: cfg.Rounds made odd (at least 1), so the median is one
// measured run, never the lower of two.
func (c *Config) rounds() int { return OddRounds(c.Rounds) }

// OddRounds is r if it is odd, else r+1 (1 for r ≤ 0).
func OddRounds(r int) int {
	if r <= 0 {
		return 1
	}
	return r | 1
}

// Parts are the sections Run measures, in order, for Config.Only.
var Parts = []string{"static", "ledger", "replay", "formats", "record", "wire", "gobench"}

// wants reports whether the run measures part.
func (c *Config) wants(part string) bool { return len(c.Only) == 0 || c.Only[part] }

// Results is everything a run measured.
type Results struct {
	Machine Machine
	Config  Config
	Static  []StaticRow
	Ledger  []LedgerRow
	Replay  []ReplayRow
	Record  *RecordResult
	Wire    []WireRow
	GoBench []GoBenchRow
	Notes   []string
}

// Machine describes where the run happened.
type Machine struct {
	CPU, Go, Kernel, Date string
	Cores                 int
}

// StaticRow is static verify of one set size.
type StaticRow struct {
	N                       int
	Bytes                   int64
	Verify, Floor           time.Duration // medians
	VerifyRSS, FloorRSS     int64
	VerifyRuns, FloorRuns   []time.Duration
	PerSnapshot, FloorPerSn time.Duration
}

// Ratio is verify / floor.
func (r StaticRow) Ratio() float64 { return r.Verify.Seconds() / r.Floor.Seconds() }

// ReplayRow is one server under load at one set size and mode.
type ReplayRow struct {
	N      int
	Mode   string // plain, stream
	Server string // floor, traceforge, ColdServer, aimock
	LoadResult
	CPUPerReq time.Duration
	RSS       int64
	Rounds    int // measured rounds; the row is the one with the median CPU/request
	// MemoHits is the share of the counted calls replay's memo answered
	// without parsing them (MemoHitRate); 0 with the memo off; NaN for a
	// server without one (floor, aimock).
	MemoHits float64
}

// IsReplay reports whether the row is traceforge replay's (memo on or off).
func (r ReplayRow) IsReplay() bool { return r.Server == "traceforge" || r.Server == ColdServer }

// Cold reports whether every counted call of the row was parsed and keyed:
// a replay row the memo answered none of (memo off, or more distinct
// requests than the memo holds). Only cold rows carry replay targets.
func (r ReplayRow) Cold() bool { return r.IsReplay() && r.MemoHits == 0 }

// RecordResult is the recording proxy's overhead.
type RecordResult struct {
	DirectP50, DirectP99, ProxyP50, ProxyP99 time.Duration
	TTFBDirect, TTFBProxy                    time.Duration
	StrictDirectP50, StrictP50               time.Duration // one client, record --sync=before-answer
	Throughput, UpstreamThroughput           LoadResult
	CPUPerCall, UpstreamCPUPerCall           time.Duration // record's (incl. nothing of the upstream) and the upstream's, at 32 clients
	FilesWritten                             int           // by the 32-client run, counted once record has stopped
	LatencyFiles, LatencyCalls               int           // by the one-client latency run, and the calls it made through record
	RecordExit                               string
	CreateCost, CreateWait                   time.Duration // a file create before measuring (fsstate.go), and the wait for it to be cheap
	// Bedrock is the same latency and throughput figures for Bedrock
	// Converse calls, which record signs again with SigV4
	// (runBedrockRecord); nil when not measured.
	Bedrock *RecordResult
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "tfbench: "+format+"\n", args...)
	}
}

func (c *Config) bin(name string) string { return filepath.Join(c.Root, "bin", name) }

// Run measures everything cfg asks for.
func Run(cfg Config) (*Results, error) {
	res := &Results{Config: cfg, Machine: DescribeMachine()}
	defer func() {
		for _, f := range cfg.cleanups {
			f()
		}
	}()
	if cfg.wants("static") || cfg.wants("ledger") || cfg.wants("replay") {
		for _, n := range cfg.Sizes {
			if _, err := EnsureSet(&cfg, n); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range cfg.Sizes {
		if cfg.wants("static") {
			row, err := runStatic(&cfg, n)
			if err != nil {
				return nil, fmt.Errorf("static verify at %d: %w", n, err)
			}
			res.Static = append(res.Static, row)
		}
		if cfg.wants("ledger") {
			lrow, err := runLedger(&cfg, n)
			if err != nil {
				return nil, fmt.Errorf("stats/tree at %d: %w", n, err)
			}
			res.Ledger = append(res.Ledger, lrow)
		}
	}
	if cfg.wants("replay") {
		rows, notes, err := runReplay(&cfg)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		res.Replay, res.Notes = rows, append(res.Notes, notes...)
	}
	if cfg.wants("formats") {
		rows, err := runFormatReplay(&cfg)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		res.Replay = append(res.Replay, rows...)
	}
	if cfg.wants("record") {
		rec, err := runRecord(&cfg)
		if err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		res.Record = rec
	}
	if cfg.wants("wire") {
		rows, err := runWire(&cfg)
		if err != nil {
			return nil, fmt.Errorf("streamed snapshot size: %w", err)
		}
		res.Wire = rows
	}
	if cfg.GoBench && cfg.wants("gobench") {
		gb, err := RunGoBench(&cfg)
		if err != nil {
			return nil, fmt.Errorf("go benchmarks: %w", err)
		}
		res.GoBench = gb
	}
	return res, nil
}

// SetDir is where the set of size n lives (<work>/<version>-<n>/.ai-snapshots).
func SetDir(cfg *Config, n int) string { return KindSetDir(cfg, gen.Chat, n) }

// KindSetDir is where the set of kind and size n lives: SetDir for chat,
// <work>/<version>-<kind>-<n>/.ai-snapshots for the others.
func KindSetDir(cfg *Config, kind gen.Kind, n int) string {
	name := fmt.Sprintf("%s-%d", gen.Version, n)
	if kind != gen.Chat {
		name = fmt.Sprintf("%s-%s-%d", gen.Version, kind, n)
	}
	return filepath.Join(cfg.Work, name, ".ai-snapshots")
}

// EnsureSet generates the set of size n unless a complete one is cached.
func EnsureSet(cfg *Config, n int) (int64, error) { return EnsureKindSet(cfg, gen.Chat, n) }

// EnsureKindSet generates the set of kind and size n unless a complete one
// is cached; a set it generates must pass `traceforge verify` before it is
// marked complete.
func EnsureKindSet(cfg *Config, kind gen.Kind, n int) (int64, error) {
	dir := KindSetDir(cfg, kind, n)
	marker := filepath.Join(filepath.Dir(dir), "complete")
	if b, err := os.ReadFile(marker); err == nil {
		if sz, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			return sz, nil
		}
	}
	_ = os.RemoveAll(filepath.Dir(dir))
	cfg.logf("generating %d snapshots into %s", n, dir)
	start := time.Now()
	sz, err := kind.WriteSet(dir, n)
	if err != nil {
		return 0, err
	}
	cfg.logf("generated %d snapshots (%.1f MB) in %s", n, float64(sz)/1e6, time.Since(start).Round(time.Millisecond))
	check := exec.Command(cfg.bin("traceforge"), "verify", "--dir", dir)
	check.Dir, check.Env = filepath.Dir(dir), append(os.Environ(), "NO_COLOR=1")
	if out, err := check.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("the generated %s set does not verify: %v: %s", kind, err, tail(string(out)))
	}
	return sz, os.WriteFile(marker, []byte(strconv.FormatInt(sz, 10)), 0o644)
}

// median is the middle of d: one measured run, since the harness runs an
// odd number of them (Config.rounds); of an even number, the upper middle.
func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func runStatic(cfg *Config, n int) (StaticRow, error) {
	dir := SetDir(cfg, n)
	sz, _ := EnsureSet(cfg, n)
	row := StaticRow{N: n, Bytes: sz}
	verify := []string{cfg.bin("traceforge"), "verify", "--dir", dir}
	floor := []string{cfg.Self, "floor-verify", dir}
	// Warm the page cache with the floor, then alternate the two programs.
	if _, _, out, err := Timed(cfg.Self, cfg.Root, floor...); err != nil {
		return row, fmt.Errorf("floor: %v: %s", err, out)
	}
	for r := 0; r < cfg.rounds(); r++ {
		wall, rss, out, err := Timed(cfg.Self, cfg.Root, verify...)
		if err != nil {
			return row, fmt.Errorf("traceforge verify: %v: %s", err, tail(out))
		}
		row.VerifyRuns = append(row.VerifyRuns, wall)
		row.VerifyRSS = max(row.VerifyRSS, rss)
		wall, rss, out, err = Timed(cfg.Self, cfg.Root, floor...)
		if err != nil {
			return row, fmt.Errorf("floor: %v: %s", err, tail(out))
		}
		row.FloorRuns = append(row.FloorRuns, wall)
		row.FloorRSS = max(row.FloorRSS, rss)
	}
	row.Verify, row.Floor = median(row.VerifyRuns), median(row.FloorRuns)
	row.PerSnapshot = row.Verify / time.Duration(n)
	row.FloorPerSn = row.Floor / time.Duration(n)
	cfg.logf("static %d: verify %s (RSS %d MB), floor %s, ratio %.2f", n, row.Verify.Round(time.Millisecond), row.VerifyRSS>>20, row.Floor.Round(time.Millisecond), row.Ratio())
	return row, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}

// ColdServer names the replay rows of traceforge with --replay-memo=false:
// every request parsed and keyed, as on its first call.
const ColdServer = "traceforge, memo off"

// server is a replay server under test.
type server struct {
	name string
	addr string
	proc *Proc
	// replay: traceforge's replay, whose memo has generation memoGen
	// (MemoOff: none); its rows show the memo's hit rate.
	replay  bool
	memoGen int
}

// memoHits is the share of lr's counted calls s's memo answered (NaN for
// a server without a memo), for a load cycling through n items.
func (s *server) memoHits(lr LoadResult, n int) float64 {
	if !s.replay {
		return math.NaN()
	}
	return MemoHitRate(lr.Spans, n, s.memoGen)
}

func (s *server) pid() int { return s.proc.Cmd.Process.Pid }

func startFloor(cfg *Config, kind gen.Kind, n int, streams bool) (*server, error) {
	argv := Pinned(0, cfg.Self, "floor-serve", "-kind", string(kind), "-n", strconv.Itoa(n), "-streams="+strconv.FormatBool(streams))
	p, err := Start(cfg.Root, nil, argv...)
	if err != nil {
		return nil, err
	}
	addr, err := p.WaitLine("LISTEN ", 5*time.Minute)
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return &server{name: "floor", addr: addr, proc: p}, nil
}

func startTraceforge(cfg *Config, dir string, extra ...string) (*server, error) {
	argv := Pinned(0, append([]string{cfg.bin("traceforge"), "verify", "--serve", "--listen", "127.0.0.1:0", "--dir", dir}, extra...)...)
	p, err := Start(filepath.Dir(dir), []string{"NO_COLOR=1"}, argv...)
	if err != nil {
		return nil, err
	}
	u, err := p.WaitLine("export TRACEFORGE_URL=http://", 10*time.Minute)
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return &server{name: "traceforge", addr: strings.TrimRight(u, "/"), proc: p, replay: true}, nil
}

// startReplay starts traceforge replay of the set of n in dir, with its
// memo (name "traceforge") or without (ColdServer).
func startReplay(cfg *Config, dir string, n int, memo bool) (*server, error) {
	if !memo {
		s, err := startTraceforge(cfg, dir, "--replay-memo=false")
		if err == nil {
			s.name, s.memoGen = ColdServer, MemoOff
		}
		return s, err
	}
	s, err := startTraceforge(cfg, dir)
	if err == nil {
		s.memoGen = ServerMemoGeneration(n)
	}
	return s, err
}

// AimockCLI is the aimock server script inside bench/aimock.
func AimockCLI(root string) string {
	return filepath.Join(root, "bench", "aimock", "node_modules", "@copilotkit", "aimock", "dist", "cli.js")
}

// WriteAimockFixtures writes aimock fixtures equivalent to items [0, n):
// the last user message → the recorded content.
func WriteAimockFixtures(path string, n int) error {
	type fixture struct {
		Match    map[string]any `json:"match"`
		Response map[string]any `json:"response"`
	}
	fs := make([]fixture, n)
	for i := range fs {
		fs[i] = fixture{Match: map[string]any{"userMessage": gen.UserText(i)}, Response: map[string]any{"content": gen.Content(i)}}
	}
	b, err := json.Marshal(map[string]any{"fixtures": fs})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func startAimock(cfg *Config, n int) (*server, error) {
	fx := filepath.Join(cfg.Work, fmt.Sprintf("aimock-%s-%d.json", gen.Version, n))
	if err := WriteAimockFixtures(fx, n); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	argv := Pinned(0, "node", AimockCLI(cfg.Root), "--port", strconv.Itoa(port), "--host", "127.0.0.1",
		"--fixtures", fx, "--log-level", "silent", "--chunk-size", "16")
	p, err := Start(cfg.Root, nil, argv...)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			p.Stop(time.Second)
			return nil, fmt.Errorf("aimock did not answer /health: %s", p.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &server{name: "aimock", addr: addr, proc: p}, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// loadAgainst runs the load generator subprocess (pinned to CPU 1) against
// s, sampling s's CPU time over the measured window.
func loadAgainst(cfg *Config, s *server, args ...string) (LoadResult, time.Duration, error) {
	argv := Pinned(1, append([]string{cfg.Self, "load", "-addr", s.addr, "-conns", strconv.Itoa(cfg.Conns),
		"-warmup", cfg.Warmup.String(), "-duration", cfg.Duration.String()}, args...)...)
	p, err := Start(cfg.Root, nil, argv...)
	if err != nil {
		return LoadResult{}, 0, err
	}
	var cpu0, cpu1 time.Duration
	var res LoadResult
	timeout := time.After(cfg.Warmup + cfg.Duration + 5*time.Minute)
loop:
	for {
		select {
		case l := <-p.Lines():
			switch {
			case l == "WINDOW open":
				cpu0, _ = CPUTime(s.pid())
			case l == "WINDOW close":
				cpu1, _ = CPUTime(s.pid())
			case strings.HasPrefix(l, "RESULT "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "RESULT ")), &res); err != nil {
					return res, 0, err
				}
				break loop
			}
		case <-p.done:
			return res, 0, fmt.Errorf("load generator exited without a result: %s", p.Stderr())
		case <-timeout:
			p.Stop(time.Second)
			return res, 0, errors.New("load generator timed out")
		}
	}
	if _, err := p.Wait(30 * time.Second); err != nil {
		return res, 0, fmt.Errorf("load generator: %v: %s", err, p.Stderr())
	}
	var per time.Duration
	if res.Requests > 0 {
		per = (cpu1 - cpu0) / time.Duration(res.Requests)
	}
	return res, per, nil
}

// runReplay measures chat replay at every set size: the floor, traceforge
// with its memo and without (ColdServer) in plain mode, and at PeerN also
// streamed and aimock. The load sends every one of the n distinct requests
// in turn, so at 100k the memo (two generations of ServerMemoGeneration)
// has forgotten each request before it comes again.
func runReplay(cfg *Config) ([]ReplayRow, []string, error) {
	var rows []ReplayRow
	var notes []string
	if cfg.Aimock {
		if _, err := os.Stat(AimockCLI(cfg.Root)); err != nil {
			return nil, nil, fmt.Errorf("aimock is not installed (%v): run bench/aimock/install.sh", err)
		}
	}
	for _, n := range cfg.Sizes {
		peer := n == cfg.PeerN
		var servers []*server
		stopAll := func() {
			for _, s := range servers {
				s.proc.Stop(10 * time.Second)
			}
		}
		fl, err := startFloor(cfg, gen.Chat, n, peer)
		if err != nil {
			return nil, nil, err
		}
		servers = append(servers, fl)
		for _, memo := range []bool{true, false} {
			tf, err := startReplay(cfg, SetDir(cfg, n), n, memo)
			if err != nil {
				stopAll()
				return nil, nil, err
			}
			servers = append(servers, tf)
		}
		if peer && cfg.Aimock {
			am, err := startAimock(cfg, n)
			if err != nil {
				stopAll()
				return nil, nil, err
			}
			servers = append(servers, am)
		}
		modes := []string{"plain"}
		if peer {
			modes = append(modes, "stream")
		}
		rs, err := measureReplay(cfg, n, servers, modes, func(m string) string { return m },
			func(m string) []string {
				return []string{"-n", strconv.Itoa(n), "-stream=" + strconv.FormatBool(m == "stream")}
			})
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, rs...)
	}
	return rows, notes, nil
}

// measureReplay runs cfg.rounds() rounds of every mode against every
// server (load args from args), then stops the servers and returns one row
// per server and mode: the round with the median CPU per request, with the
// server's peak RSS. The servers are stopped whatever happens.
func measureReplay(cfg *Config, n int, servers []*server, modes []string, modeName func(string) string, args func(string) []string) ([]ReplayRow, error) {
	runs := map[string][]ReplayRow{}
	var err error
rounds:
	for r := 0; r < cfg.rounds(); r++ {
		for _, m := range modes {
			for _, s := range servers {
				lr, per, e := loadAgainst(cfg, s, args(m)...)
				if e != nil {
					err = fmt.Errorf("%s %s at %d: %w", s.name, modeName(m), n, e)
					break rounds
				}
				row := ReplayRow{N: n, Mode: modeName(m), Server: s.name, LoadResult: lr, CPUPerReq: per, MemoHits: s.memoHits(lr, n)}
				row.Spans = nil // used: the report does not need them
				runs[row.Mode+"/"+s.name] = append(runs[row.Mode+"/"+s.name], row)
				cfg.logf("replay %d %s %s: %.0f req/s, p50 %s, p99 %s, CPU %s/req, memo hits %s, %d errors", n, row.Mode, s.name, lr.RPS, lr.P50, lr.P99, per, hitRate(row.MemoHits), lr.Errors)
			}
		}
	}
	var rows []ReplayRow
	for _, s := range servers {
		// VmHWM of the server itself (ru_maxrss would include the harness's memory; see Timed).
		rss := HWM(s.pid())
		s.proc.Stop(10 * time.Second)
		for _, m := range modes {
			rs := runs[modeName(m)+"/"+s.name]
			if len(rs) == 0 {
				continue
			}
			row := PickMedianRound(rs)
			row.RSS, row.Rounds = rss, len(rs)
			rows = append(rows, row)
		}
	}
	return rows, err
}

// PickMedianRound returns the round with the median CPU per request. The
// harness runs an odd number of rounds (Config.rounds), so it is the
// middle one; of an even number it would be the upper middle, never the
// lowest.
func PickMedianRound(rs []ReplayRow) ReplayRow {
	s := append([]ReplayRow(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].CPUPerReq < s[j].CPUPerReq })
	return s[len(s)/2]
}

// DescribeMachine reads the CPU model, core count, kernel and Go version.
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Date: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					m.CPU = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	return m
}
