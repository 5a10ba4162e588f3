// Command tfbench is traceforge's benchmark harness (`make bench`).
//
//	tfbench run [-quick] [-out BENCHMARKS.md]   the whole harness
//	tfbench run -only formats [-quick]          only the other formats' replay rows (prints; writes no file)
//	tfbench floor-verify DIR                    static floor: read, parse, hash
//	tfbench floor-serve [-kind K] -n N [-streams]  replay floor: bare net/http from memory
//	tfbench fake-bedrock [-listen A]            fake Bedrock runtime checking SigV4 (record rows)
//	tfbench load -addr A [-kind K] -n N [-stream]  load generator (set calls)
//	tfbench load -addr A [-kind K] -distinct BASE  load generator (every call distinct)
//	tfbench latency -direct A -proxy B [-kind K] ...  sequential latency, direct vs proxy
//	tfbench profile-verify DIR OUT              CPU profile of the static checks
//	tfbench rusage -- COMMAND ARGS...           wall time and peak RSS of COMMAND
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/bench/harness"
	"github.com/traceforge/traceforge/internal/verify"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: tfbench run|floor-verify|floor-serve|fake-bedrock|load|latency|profile-verify ...")
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(args[1:], stdout, stderr)
	case "floor-verify":
		err = cmdFloorVerify(args[1:], stdout)
	case "floor-serve":
		err = cmdFloorServe(args[1:], stdout)
	case "fake-bedrock":
		err = cmdFakeBedrock(args[1:], stdout)
	case "load":
		err = cmdLoad(args[1:], stdout)
	case "latency":
		err = cmdLatency(args[1:], stdout)
	case "profile-verify":
		err = cmdProfileVerify(args[1:], stdout)
	case "rusage":
		if len(args) < 3 || args[1] != "--" {
			err = fmt.Errorf("usage: tfbench rusage -- COMMAND [ARGS]")
		} else {
			err = harness.Rusage(args[2:], stderr)
		}
	default:
		err = fmt.Errorf("unknown subcommand %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "tfbench: %v\n", err)
		return 1
	}
	return 0
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	quick := fs.Bool("quick", os.Getenv("BENCH_QUICK") == "1", "small sets and short runs (also BENCH_QUICK=1)")
	out := fs.String("out", "BENCHMARKS.md", "Markdown file whose generated part is rewritten (\"\" = none)")
	work := fs.String("work", filepath.Join(os.TempDir(), "traceforge-bench"), "scratch folder for generated sets (kept between runs)")
	noAimock := fs.Bool("no-aimock", false, "skip aimock")
	noGoBench := fs.Bool("no-gobench", false, "skip the Go benchmarks")
	only := fs.String("only", "", "comma-separated parts to measure ("+strings.Join(harness.Parts, ", ")+"); printed, BENCHMARKS.md is not rewritten")
	sizes := fs.String("sizes", "", "comma-separated set sizes (default 1000,10000,100000; quick: 1000)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !slices.Contains(harness.Parts, p) {
			return fmt.Errorf("-only %q: the parts are %s", p, strings.Join(harness.Parts, ", "))
		}
		parts[p] = true
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cfg := harness.Config{
		Root: root, Self: self, Work: *work,
		Sizes: []int{1000, 10000, 100000}, PeerN: 1000,
		Conns: 32, Warmup: time.Second, Duration: 4 * time.Second, Rounds: 3,
		Aimock: !*noAimock, GoBench: !*noGoBench,
		Command: "make bench", Log: stderr,
	}
	if *quick {
		cfg.Sizes, cfg.Duration, cfg.Warmup, cfg.Rounds = []int{1000}, 2*time.Second, 500*time.Millisecond, 1
		cfg.Command = "BENCH_QUICK=1 make bench"
	}
	if *noAimock {
		cfg.Command += " (aimock skipped)"
	}
	if err := os.MkdirAll(cfg.Work, 0o755); err != nil {
		return err
	}
	if *sizes != "" {
		cfg.Sizes = nil
		for _, f := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				return fmt.Errorf("-sizes: %q is not a positive set size", f)
			}
			cfg.Sizes = append(cfg.Sizes, n)
		}
		cfg.Command += " (sizes " + *sizes + ")"
	}
	if len(parts) > 0 || *sizes != "" {
		cfg.Only, *out = parts, ""
		cfg.Command = "go build -o bin/tfbench ./bench/cmd/tfbench && bin/tfbench run " + strings.Join(os.Args[2:], " ")
		if *quick {
			cfg.Command = "BENCH_QUICK=1 " + cfg.Command
		}
	}
	res, err := harness.Run(cfg)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, res.Markdown())
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, res.Table())
	if *out != "" {
		if err := harness.WriteMarkdown(*out, res.Markdown()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "tfbench: wrote %s\n", *out)
	}
	return nil
}

func cmdFloorVerify(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: tfbench floor-verify DIR")
	}
	n, err := harness.FloorVerify(args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d files\n", n)
	return nil
}

func cmdFloorServe(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("floor-serve", flag.ContinueOnError)
	n := fs.Int("n", 1000, "items [0, n)")
	streams := fs.Bool("streams", false, "also serve the streamed variants")
	kindName := fs.String("kind", string(gen.Chat), "calls: "+kindNames())
	listen := fs.String("listen", "127.0.0.1:0", "address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	kind, err := gen.ParseKind(*kindName)
	if err != nil {
		return err
	}
	h, err := harness.FloorHandler(kind, *n, *streams)
	if err != nil {
		return err
	}
	return serve(h, *listen, stdout, "LISTEN ")
}

// cmdFakeBedrock serves the fake Bedrock runtime of the record rows
// (harness.FakeBedrock) until SIGINT or SIGTERM, printing
// FAKE_UPSTREAM_URL=http://ADDR as tf-fake-upstream does.
func cmdFakeBedrock(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fake-bedrock", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return serve(harness.FakeBedrock(), *listen, stdout, "FAKE_UPSTREAM_URL=http://")
}

// serve serves h on listen until SIGINT or SIGTERM, once it has printed
// prefix and the address it listens on.
func serve(h http.Handler, listen string, stdout io.Writer, prefix string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	fmt.Fprintf(stdout, "%s%s\n", prefix, ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	return srv.Close()
}

// kindNames lists the call kinds for a flag's help: "chat, responses, …".
func kindNames() string {
	names := make([]string, len(gen.Kinds))
	for i, k := range gen.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func cmdLoad(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	addr := fs.String("addr", "", "host:port")
	n := fs.Int("n", 1000, "set size: calls cycle through items [0, n)")
	stream := fs.Bool("stream", false, "streamed calls")
	kindName := fs.String("kind", string(gen.Chat), "calls: "+kindNames())
	distinct := fs.Int("distinct", -1, "every call a new item, from this index on")
	conns := fs.Int("conns", 32, "keep-alive connections")
	warmup := fs.Duration("warmup", time.Second, "not measured")
	duration := fs.Duration("duration", 4*time.Second, "measured")
	if err := fs.Parse(args); err != nil {
		return err
	}
	kind, err := gen.ParseKind(*kindName)
	if err != nil {
		return err
	}
	var src harness.Source
	if *distinct >= 0 {
		base := *distinct
		src = func(c, seq int) []byte {
			return harness.KindRaw(*addr, kind, base+c*1_000_000+seq, *stream, harness.SourceHeader)
		}
	} else {
		src = harness.KindSource(*addr, kind, *n, *stream, *conns)
	}
	res := harness.RunLoad(harness.LoadConfig{
		Addr: *addr, Conns: *conns, Warmup: *warmup, Duration: *duration, Source: src,
		OnWindow: func(open bool) {
			if open {
				fmt.Fprintln(stdout, "WINDOW open")
			} else {
				fmt.Fprintln(stdout, "WINDOW close")
			}
		},
	})
	b, _ := json.Marshal(res)
	fmt.Fprintf(stdout, "RESULT %s\n", b)
	return nil
}

func cmdLatency(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("latency", flag.ContinueOnError)
	direct := fs.String("direct", "", "host:port of the upstream")
	proxy := fs.String("proxy", "", "host:port of the proxy")
	n := fs.Int("n", 200, "calls per block")
	rounds := fs.Int("rounds", 10, "direct/proxy block pairs")
	base := fs.Int("base", 0, "first item index")
	stream := fs.Bool("stream", false, "streamed calls")
	kindName := fs.String("kind", string(gen.Chat), "calls: "+kindNames())
	if err := fs.Parse(args); err != nil {
		return err
	}
	kind, err := gen.ParseKind(*kindName)
	if err != nil {
		return err
	}
	res, err := harness.Latency(*direct, *proxy, kind, *n, *rounds, *base, *stream)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(res)
	fmt.Fprintf(stdout, "RESULT %s\n", b)
	return nil
}

func cmdProfileVerify(args []string, stdout io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: tfbench profile-verify DIR OUT.prof")
	}
	f, err := os.Create(args[1])
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	start := time.Now()
	rep, _, err := verify.Static(verify.StaticOptions{Dir: args[0]})
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d files, %d findings, %s; inspect with: go tool pprof -top %s\n", len(rep.Checked), len(rep.Findings), time.Since(start), args[1])
	if len(rep.Findings) > 0 {
		fmt.Fprintln(stdout, strings.TrimSpace(rep.Findings[0].Message))
	}
	return nil
}
