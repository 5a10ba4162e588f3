package result

import (
	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/finding"
)

// Miss is a replay request that matched no snapshot (drift).
// Key is empty for a call that could not be keyed (Reason says why).
type Miss struct {
	Provider string `json:"provider"`
	Endpoint string `json:"endpoint,omitempty"`
	Path     string `json:"path,omitempty"` // the path the application called
	Key      string `json:"key,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Source   string `json:"source,omitempty"`
	Closest  string `json:"closest,omitempty"` // display path of the closest snapshot
	Diff     string `json:"diff,omitempty"`    // unified diff closest → request
	Count    int    `json:"count"`
	// Near are the closest snapshots (at most three), best first, each
	// with what differs; Near[0] is Closest.
	Near []Near `json:"closest_snapshots,omitempty"`
	// AnnotateFile and AnnotateLine place the GitHub annotation: the
	// request's source file and line when that file exists in the project,
	// else "" (the closest snapshot's file is used).
	AnnotateFile string `json:"-"`
	AnnotateLine int    `json:"-"`
}

// Near is a snapshot close to an unmatched request.
type Near struct {
	File       string  `json:"file"` // display path
	Source     string  `json:"source,omitempty"`
	SameSource bool    `json:"same_source"`
	SameModel  bool    `json:"same_model_and_endpoint"`
	Similarity float64 `json:"similarity"` // structural, 0..1
	// Changes lists what differs from the snapshot's key request to the
	// request's, one JSON pointer per line: `/messages/1/content: "a" → "b"`,
	// `/user: absent → "x"` (added), `/seed: 7 → absent` (removed).
	Changes []string `json:"changes"`
}

// LiveResult is the outcome of --live for one snapshot.
type LiveResult struct {
	File        string   `json:"file"`
	Runs        int      `json:"runs"`
	Succeeded   int      `json:"succeeded"`
	Different   int      `json:"different"` // runs that fail against the recording (a fail_on class, or live_compare)
	Drift       bool     `json:"drift"`
	Nondet      bool     `json:"nondeterministic"`
	ByPolicy    bool     `json:"nondeterministic_by_policy,omitempty"`
	Changes     []string `json:"changes,omitempty"` // provider.Diff of the first differing run
	Diff        string   `json:"diff,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	Errors      []string `json:"errors,omitempty"`
	Message     string   `json:"message,omitempty"`
	Failed      bool     `json:"failed"`
	Synthesized bool     `json:"synthesized,omitempty"`

	// Classes are the change classes the live runs show against the
	// recording (every class any run shows, in change.All order);
	// FailingClasses those the config's fail_on lists (what fails it; none
	// under a policy exception, which compares its live_compare fields).
	// Changes and Diff are those of the shown run: the first failing one,
	// else the first that differs.
	Classes        []change.Class `json:"classes,omitempty"`
	FailingClasses []change.Class `json:"failing_classes,omitempty"`
	// Change is the shown run against the recording (the HTML report's
	// side-by-side diffs); nil when every run equals the recording.
	Change *change.Result `json:"-"`
}

// Replayed is what a replay server saw, once it stopped.
type Replayed struct {
	Misses []Miss   // requests that matched no snapshot (drift)
	Unused []string // display paths of the snapshots never requested
	Served int      // requests answered from a snapshot
	// Exchanges counts the served requests that were exchanges (DESIGN
	// §13.4: count-tokens, files, polling), apart from LLM calls.
	Exchanges int
	// Synthesized lists snapshots answered with a synthesized body.
	Synthesized []string
	// ReplayErrors are snapshots whose recorded response could not be sent.
	ReplayErrors []string
	// Normalized lists the snapshots matched only thanks to a declared key
	// normalizer, by display path.
	Normalized []NormalizedMatch
	// Bypassed lists the calls refused under --deny-bypass: they escaped
	// the base URL (CONNECT or absolute-form through the proxy variables).
	Bypassed []Bypass
}

// Bypass is one destination reached for through the proxy variables.
type Bypass struct {
	Method string `json:"method"`
	Target string `json:"target"` // host:port
	Count  int    `json:"count"`
	Hint   string `json:"fix"`
}

// NormalizedMatch is a snapshot that answered requests whose keys declared
// key normalizers changed ("matched via uuid").
type NormalizedMatch struct {
	Snapshot string   `json:"snapshot"`
	Rules    []string `json:"via"`
	Count    int      `json:"count"`
}

// NormalizedCount is the number of replayed requests that needed a rule.
func (r Replayed) NormalizedCount() int {
	n := 0
	for _, m := range r.Normalized {
		n += m.Count
	}
	return n
}

// VerifyReport is everything a verify run found: the static checks, what
// replay saw, the live results, and how the run was made. It is a value:
// the command builds it from each stage's result and renders it once.
type VerifyReport struct {
	Dir       string // the snapshot folder's display name
	Mode      string // static, replay, live, serve
	Checked   []string
	Findings  finding.Findings
	Exception []string // policy exceptions applied
	Replayed
	Live     []LiveResult
	Command  string
	ExitCode *int
	// Shard is the --shard K/N verified ("" = the whole set).
	Shard string
	// Upstreams lists the live upstreams ("openai: URL").
	Upstreams []string
	// LiveRuns is --runs of a live verification.
	LiveRuns int
	// FailOnUnused turns unused snapshots into failures.
	FailOnUnused bool
	// FailOn is the classes a live run fails on (the config's fail_on).
	FailOn []change.Class
	// Totals are the run's calls, tokens, cost and latency (verify --live);
	// nil when the run made no upstream call.
	Totals *Totals
}

// Failed reports whether the run must fail (exit 1): the pass/fail policy
// of verify. An error finding, an unmatched request, a replay error, a
// bypass and a failed live result fail it; an unused snapshot only with
// FailOnUnused.
func (r *VerifyReport) Failed() bool {
	if r.Findings.Errors() > 0 || len(r.Misses) > 0 || len(r.ReplayErrors) > 0 || len(r.Bypassed) > 0 {
		return true
	}
	if r.FailOnUnused && len(r.Unused) > 0 {
		return true
	}
	for _, l := range r.Live {
		if l.Failed {
			return true
		}
	}
	return false
}
