package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// GoBenchPackages hold the Go benchmarks of the hot paths (internal/verify:
// explaining a replay miss against a 10k set, BenchmarkNearest).
var GoBenchPackages = []string{"./internal/snapshot", "./internal/check", "./internal/replay", "./internal/ledger", "./internal/verify"}

// GoBenchRow is one line of `go test -bench` output.
type GoBenchRow struct {
	Pkg, Name             string
	NsOp, BytesOp, Allocs float64
}

// RunGoBench runs the Go benchmarks of GoBenchPackages.
func RunGoBench(cfg *Config) ([]GoBenchRow, error) {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	benchtime := "1s"
	if cfg.Duration < 3e9 {
		benchtime = "200ms"
	}
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime}, GoBenchPackages...)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = cfg.Root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cfg.logf("go %s", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, tail(out.String()))
	}
	return ParseGoBench(out.String()), nil
}

// ParseGoBench reads the benchmark lines of `go test -bench -benchmem` output.
func ParseGoBench(out string) []GoBenchRow {
	var rows []GoBenchRow
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "pkg:" {
			pkg = strings.TrimPrefix(f[1], "github.com/traceforge/traceforge/")
			continue
		}
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		r := GoBenchRow{Pkg: pkg, Name: f[0]}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				r.NsOp = v
			case "B/op":
				r.BytesOp = v
			case "allocs/op":
				r.Allocs = v
			}
		}
		rows = append(rows, r)
	}
	return rows
}
