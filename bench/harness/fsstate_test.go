package harness

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCreateCostLeavesItsFiles(t *testing.T) {
	dir := t.TempDir()
	cost, err := createCost(dir)
	if err != nil || cost <= 0 {
		t.Fatalf("createCost = %v, %v", cost, err)
	}
	probes, _ := filepath.Glob(filepath.Join(dir, "probe-*", "f*"))
	if len(probes) != probeFiles {
		t.Errorf("%d probe files left, want %d (deleting them would slow the next creates)", len(probes), probeFiles)
	}
	if _, err := createCost(filepath.Join(dir, "missing", "deeper")); err == nil {
		t.Error("createCost in a missing folder: no error")
	}
}

func TestSettleWaitsForCheapCreates(t *testing.T) {
	var log bytes.Buffer
	cfg := &Config{Log: &log}
	us := time.Microsecond
	// A cheap moment inside a slow spell does not end the wait.
	costs := []time.Duration{700 * us, 30 * us, 300 * us, 40 * us, 90 * us, 10 * us, 5 * us}
	var slept time.Duration
	probe := func() (time.Duration, error) { c := costs[0]; costs = costs[1:]; return c, nil }
	cost, waited, err := settle(cfg, probe, func(d time.Duration) { slept += d }, time.Hour)
	if err != nil || cost != 90*us || waited != 5*settleInterval || slept != waited || len(costs) != 1 {
		t.Fatalf("settle = %v, %v, %v (slept %v, %d probes left)", cost, waited, err, slept, len(costs))
	}
	if n := strings.Count(log.String(), "waiting for it to settle"); n != 2 {
		t.Errorf("%d waiting lines, want 2:\n%s", n, log.String())
	}

	// It gives up after the limit, reporting the cost it last saw.
	probe = func() (time.Duration, error) { return time.Millisecond, nil }
	cost, waited, err = settle(cfg, probe, func(time.Duration) {}, 3*settleInterval)
	if err != nil || cost != time.Millisecond || waited != 3*settleInterval {
		t.Errorf("settle past the limit = %v, %v, %v", cost, waited, err)
	}

	boom := errors.New("boom")
	if _, _, err := settle(cfg, func() (time.Duration, error) { return 0, boom }, nil, time.Hour); !errors.Is(err, boom) {
		t.Errorf("probe error: %v", err)
	}
}

func TestProcStderrGoesToAFile(t *testing.T) {
	p, err := Start(t.TempDir(), nil, "sh", "-c", "echo ready; echo oops >&2; echo more >&2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitLine("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := p.Stderr(); got != "oops\nmore" {
		t.Errorf("Stderr() = %q", got)
	}
	if _, ok := p.Cmd.Stderr.(*os.File); !ok {
		t.Errorf("stderr is a %T, not a file: the harness would wake on every line", p.Cmd.Stderr)
	}
}
