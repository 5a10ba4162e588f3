package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
)

// FormatKinds are the wire formats whose replay is measured beside the chat
// rows (issue 12 item 6, issue 18 item 2): a set of PeerN calls each,
// plain and streamed, traceforge against the floor serving the same bytes.
// Wire and Bedrock sets hold streams as format 1.2.0 stores them, their
// events as sent: a streamed call is answered from the events, a plain one
// (the key ignores "stream") with the body they assemble to.
var FormatKinds = []gen.Kind{gen.Responses, gen.Gemini, gen.Wire, gen.Bedrock}

// FormatMode is the replay row mode of kind's calls in mode (plain,
// stream): "responses stream".
func FormatMode(kind gen.Kind, mode string) string { return string(kind) + " " + mode }

// runFormatReplay measures replay of FormatKinds at cfg.PeerN: per kind
// the floor (-kind, streams on) and traceforge with its memo and without
// (ColdServer) on the kind's set, both modes, cfg.rounds() rounds, the round
// with the median CPU/request kept (like the chat rows).
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
		for _, memo := range []bool{true, false} {
			tf, err := startReplay(cfg, KindSetDir(cfg, kind, n), n, memo)
			if err != nil {
				for _, s := range servers {
					s.proc.Stop(10 * time.Second)
				}
				return nil, fmt.Errorf("%s traceforge: %w", kind, err)
			}
			servers = append(servers, tf)
		}
		rs, err := measureReplay(cfg, n, servers, []string{"plain", "stream"}, func(m string) string { return FormatMode(kind, m) },
			func(m string) []string {
				return []string{"-kind", string(kind), "-n", strconv.Itoa(n), "-stream=" + strconv.FormatBool(m == "stream")}
			})
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// formatTargets: cold replay (memo off) of each FormatKinds call, plain
// and streamed, costs at most ReplayCPUTarget times the floor's CPU per
// request (issue 18 item 2, issue 29; issue 12 item 6 had asked for 2× on
// streams).
func (r *Results) formatTargets() []Target {
	var ts []Target
	n := r.Config.PeerN
	for _, kind := range FormatKinds {
		for _, m := range []string{"plain", "stream"} {
			mode := FormatMode(kind, m)
			fl := r.replay(n, mode, "floor")
			if fl == nil || fl.CPUPerReq <= 0 {
				continue
			}
			for _, server := range []string{ColdServer, "traceforge"} {
				tf := r.replay(n, mode, server)
				if tf == nil || !tf.Cold() {
					continue
				}
				y := float64(tf.CPUPerReq) / float64(fl.CPUPerReq)
				ts = append(ts, Target{Name: fmt.Sprintf("cold %s replay CPU/request vs floor (%d, %s)", label(kind, m), n, coldLabel(tf)), Want: "≤ 1.5×", Got: fmt.Sprintf("%.2f×", y), Met: y <= ReplayCPUTarget && tf.Errors == 0})
			}
		}
	}
	return ts
}

// kindLabels name the kinds in target names.
var kindLabels = map[gen.Kind]string{gen.Responses: "Responses", gen.Gemini: "Gemini",
	gen.Wire: "Anthropic (stored as events)", gen.Bedrock: "Bedrock Converse (stored as events)"}

// label is "Responses stream", "Gemini plain".
func label(kind gen.Kind, mode string) string {
	name := kindLabels[kind]
	if name == "" {
		name = string(kind)
	}
	return name + " " + mode
}

// formatsNote explains the format rows' modes, "" when r has none.
func (r *Results) formatsNote() string {
	for _, x := range r.Replay {
		if k, _, ok := strings.Cut(x.Mode, " "); ok && slices.Contains(FormatKinds, gen.Kind(k)) {
			return "Format rows: `responses` and `gemini` are OpenAI Responses and Gemini generateContent calls stored with their body (a stream synthesized from it); `wire` are Anthropic messages and `bedrock` Bedrock Converse calls (POST /model/{model id}/converse, streamed as /converse-stream, AWS event-stream frames, sent SigV4-signed) recorded streamed and stored as format 1.2.0 stores a stream — its events as sent, no body: `stream` is answered from the events, `plain` (same key) with the body they assemble to. The floor sends the same bytes from memory."
		}
	}
	return ""
}
