package harness

import (
	"fmt"
	"strconv"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
)

// FormatKinds are the wire formats whose replay is measured beside the chat
// rows (issue 12 item 6, issue 18 item 2): a set of PeerN calls each,
// plain and streamed, traceforge against the floor serving the same bytes.
var FormatKinds = []gen.Kind{gen.Responses, gen.Gemini}

// FormatMode is the replay row mode of kind's calls in mode (plain,
// stream): "responses stream".
func FormatMode(kind gen.Kind, mode string) string { return string(kind) + " " + mode }

// runFormatReplay measures replay of FormatKinds at cfg.PeerN: per kind
// the floor (-kind, streams on) and traceforge on the kind's set, both
// modes, max(1, Rounds-1) rounds, the round with the median CPU/request
// kept (like the chat rows at PeerN).
func runFormatReplay(cfg *Config) ([]ReplayRow, error) {
	var rows []ReplayRow
	n := cfg.PeerN
	for _, kind := range FormatKinds {
		if _, err := EnsureKindSet(cfg, kind, n); err != nil {
			return nil, fmt.Errorf("%s set: %w", kind, err)
		}
		fl, err := startFloor(cfg, kind, n, true)
		if err != nil {
			return nil, fmt.Errorf("%s floor: %w", kind, err)
		}
		servers := []*server{fl}
		stopAll := func() {
			for _, s := range servers {
				s.proc.Stop(10 * time.Second)
			}
		}
		tf, err := startTraceforge(cfg, KindSetDir(cfg, kind, n))
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("%s traceforge: %w", kind, err)
		}
		servers = append(servers, tf)
		runs := map[string][]ReplayRow{}
		for r := 0; r < max(1, cfg.Rounds-1); r++ {
			for _, m := range []string{"plain", "stream"} {
				mode := FormatMode(kind, m)
				for _, s := range servers {
					lr, per, err := loadAgainst(cfg, s, "-kind", string(kind), "-n", strconv.Itoa(n), "-stream="+strconv.FormatBool(m == "stream"))
					if err != nil {
						stopAll()
						return nil, fmt.Errorf("%s %s at %d: %w", s.name, mode, n, err)
					}
					runs[mode+"/"+s.name] = append(runs[mode+"/"+s.name], ReplayRow{N: n, Mode: mode, Server: s.name, LoadResult: lr, CPUPerReq: per})
					cfg.logf("replay %d %s %s: %.0f req/s, p50 %s, p99 %s, CPU %s/req, %d errors", n, mode, s.name, lr.RPS, lr.P50, lr.P99, per, lr.Errors)
				}
			}
		}
		for _, s := range servers {
			rss := HWM(s.pid())
			s.proc.Stop(10 * time.Second)
			for _, m := range []string{"plain", "stream"} {
				row := pickMedianRound(runs[FormatMode(kind, m)+"/"+s.name])
				row.RSS = rss
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// formatTargets: replay of each FormatKinds call, plain and streamed, costs
// at most ReplayCPUTarget times the floor's CPU per request (issue 18 item
// 2; issue 12 item 6 had asked for 2× on streams).
func (r *Results) formatTargets() []Target {
	var ts []Target
	n := r.Config.PeerN
	for _, kind := range FormatKinds {
		for _, m := range []string{"plain", "stream"} {
			mode := FormatMode(kind, m)
			tf, fl := r.replay(n, mode, "traceforge"), r.replay(n, mode, "floor")
			if tf == nil || fl == nil || fl.CPUPerReq <= 0 {
				continue
			}
			y := float64(tf.CPUPerReq) / float64(fl.CPUPerReq)
			ts = append(ts, Target{Name: fmt.Sprintf("%s replay CPU/request vs floor (%d)", label(kind, m), n), Want: "≤ 1.5×", Got: fmt.Sprintf("%.2f×", y), Met: y <= ReplayCPUTarget && tf.Errors == 0})
		}
	}
	return ts
}

// label is "Responses stream", "Gemini plain".
func label(kind gen.Kind, mode string) string {
	name := map[gen.Kind]string{gen.Responses: "Responses", gen.Gemini: "Gemini"}[kind]
	if name == "" {
		name = string(kind)
	}
	return name + " " + mode
}
