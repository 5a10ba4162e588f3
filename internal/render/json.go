package render

import (
	"encoding/json"
	"io"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
)

type jsonFinding struct {
	finding.Finding
	Severity string `json:"severity"`
}

func (r report) writeJSON(w io.Writer) error {
	fs := make([]jsonFinding, 0, len(r.Findings))
	for _, f := range r.Findings {
		fs = append(fs, jsonFinding{f, f.Severity.String()})
	}
	out := struct {
		OK        bool                     `json:"ok"`
		Dir       string                   `json:"dir"`
		Mode      string                   `json:"mode"`
		Snapshots int                      `json:"snapshots"`
		Findings  []jsonFinding            `json:"findings"`
		Unmatched []result.Miss            `json:"unmatched"`
		Unused    []string                 `json:"unused"`
		Served    int                      `json:"replayed"`
		Synth     []string                 `json:"synthesized,omitempty"`
		Norm      []result.NormalizedMatch `json:"matched_via_normalizers,omitempty"`
		Bypassed  []result.Bypass          `json:"bypassed,omitempty"`
		ReplayErr []string                 `json:"replay_errors,omitempty"`
		Shard     string                   `json:"shard,omitempty"`
		Upstreams []string                 `json:"upstreams,omitempty"`
		Runs      int                      `json:"live_runs,omitempty"`
		Live      []result.LiveResult      `json:"live,omitempty"`
		Command   string                   `json:"command,omitempty"`
		ExitCode  *int                     `json:"command_exit_code,omitempty"`
		Policy    []string                 `json:"exceptions,omitempty"`
		Summary   string                   `json:"summary"`

		FailOn any            `json:"fail_on,omitempty"` // live only; [] when it fails on nothing
		Totals *result.Totals `json:"totals,omitempty"`
		// Of "replayed": the exchanges (DESIGN §13.4), counted apart.
		Exchanges int `json:"replayed_exchanges,omitempty"`
	}{!r.Failed(), r.Dir, r.Mode, len(r.Checked), fs, r.Misses, r.Unused, r.Served, r.Synthesized, r.Normalized, r.Bypassed, r.ReplayErrors,
		r.Shard, r.Upstreams, r.LiveRuns, r.Live, r.Command, r.ExitCode, r.Exception, r.summary(style{}), nil, r.Totals, r.Exchanges}
	if r.Mode == "live" && r.FailOn != nil {
		out.FailOn = r.FailOn
	}
	if out.Unmatched == nil {
		out.Unmatched = []result.Miss{}
	}
	if out.Unused == nil {
		out.Unused = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
