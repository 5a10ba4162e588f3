package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// maxLiveBody caps a live answer (the snapshot file cap).
const maxLiveBody = 64 << 20

// LiveOptions configure verify --live.
type LiveOptions struct {
	Snapshots []*check.Snapshot // the valid snapshots to re-run
	Display   string            // snapshot folder as named in reports
	Runs      int               // runs per snapshot (≥ 1)
	// Concurrency bounds the requests in flight across all snapshots (≥ 1).
	Concurrency int
	// Upstreams are the base URLs by provider, as the SDKs' base-URL
	// variables hold them (Descriptor.BaseURLEnv: OpenAI's with its /v1).
	Upstreams map[provider.Name]string
	// Named are the named OpenAI-compatible upstreams (--upstream
	// NAME=URL): a stored endpoint /u/NAME/… is re-sent to NAME's URL.
	Named map[string]string
	// Keys are the keys by provider, put on each request by the
	// provider's Descriptor.LiveAuth.
	Keys map[provider.Name]string
	// Client sends the requests (nil: a client with a 10-minute timeout).
	Client *http.Client
	// Progress, when set, is called after each finished run.
	Progress func(done, total int)
	// FailOn lists the change classes that fail a snapshot (the config's
	// fail_on; nil = change.DefaultFailOn()). A snapshot under a policy
	// exception compares its live_compare fields instead.
	FailOn []change.Class
	// Totals, when set, gets every successful run (the run's totals line).
	Totals *ledger.Totals
}

// liveRun is the outcome of one request.
type liveRun struct {
	fields snapshot.Fields
	body   map[string]any
	err    string
}

// liveNow is the clock live latencies are measured with (replaced in tests).
var liveNow = time.Now

// Live re-sends every snapshot's request Runs times and classifies each
// answer against the recording (change.Classify, DESIGN §12.9 item 7): a run
// fails when it shows a class of FailOn (under a policy exception: when its
// live_compare fields differ). Streamed recordings are re-sent
// non-streamed: the key ignores stream and stream_options, and a stream
// assembles to the same non-streamed body. Results are in snapshot order.
func Live(ctx context.Context, o LiveOptions) []result.LiveResult {
	runs, conc := max(o.Runs, 1), max(o.Concurrency, 1)
	failOn := o.FailOn
	if failOn == nil {
		failOn = change.DefaultFailOn()
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Minute}
	}
	outcomes := make([][]liveRun, len(o.Snapshots))
	for i := range outcomes {
		outcomes[i] = make([]liveRun, runs)
	}
	type job struct{ snap, run int }
	jobs := make(chan job)
	var wg, phaseWG sync.WaitGroup
	var mu sync.Mutex
	done, total := 0, len(o.Snapshots)*runs
	parents, phases := chainPhases(o.Snapshots)
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				// A chained Responses call continues its parent's live
				// answer of the same run (DESIGN §12.9 item 5: --live
				// runs a chain root first, sending the live ids).
				prev := ""
				if p, ok := parents[j.snap]; ok {
					prev, _ = outcomes[p][j.run].body["id"].(string)
				}
				outcomes[j.snap][j.run] = sendLive(ctx, client, o, o.Snapshots[j.snap], prev)
				phaseWG.Done()
				mu.Lock()
				done++
				d := done
				if o.Progress != nil {
					o.Progress(d, total)
				}
				mu.Unlock()
			}
		}()
	}
	// Runs of one snapshot are interleaved with the others' so that a slow
	// or rate-limited snapshot does not serialize its own runs.
feed:
	for _, phase := range phases {
		for r := 0; r < runs; r++ {
			for _, i := range phase {
				phaseWG.Add(1)
				select {
				case jobs <- job{i, r}:
				case <-ctx.Done():
					phaseWG.Done()
					break feed
				}
			}
		}
		phaseWG.Wait() // the next phase continues these answers
	}
	close(jobs)
	wg.Wait()
	results := make([]result.LiveResult, len(o.Snapshots))
	for i, s := range o.Snapshots {
		results[i] = judge(o.Display, s, outcomes[i], failOn, ctx.Err())
	}
	return results
}

// chainPhases orders the snapshots for --live: phase 0 holds every snapshot
// that continues no other one in the list; phase n+1 the Responses calls
// chained (previous_response_id) to a snapshot of phase n. parents maps a
// chained snapshot's index to its parent's.
func chainPhases(snaps []*check.Snapshot) (parents map[int]int, phases [][]int) {
	byID := map[string]int{}
	for i, s := range snaps {
		if _, ok := byID[s.Record.ID]; !ok {
			byID[s.Record.ID] = i
		}
	}
	parents = map[int]int{}
	for i, s := range snaps {
		if p, ok := byID[s.Record.ParentID]; ok && s.ChainedFrom != "" && p != i {
			parents[i] = p
		}
	}
	depth := make([]int, len(snaps))
	var depthOf func(i, guard int) int
	depthOf = func(i, guard int) int {
		p, ok := parents[i]
		if !ok || guard > len(snaps) {
			return 0
		}
		return depthOf(p, guard+1) + 1
	}
	for i := range snaps {
		depth[i] = depthOf(i, 0)
		for len(phases) <= depth[i] {
			phases = append(phases, nil)
		}
		phases[depth[i]] = append(phases[depth[i]], i)
	}
	return parents, phases
}

// liveURL joins an upstream base URL and an endpoint the way the SDKs do:
// the endpoint goes after the base URL's path, and its query (a gateway's
// ?api-key=…) is kept.
func liveURL(o LiveOptions, d *provider.Descriptor, e provider.Endpoint) (*url.URL, error) {
	// A key endpoint may carry the query that joins its key (Azure
	// OpenAI's ?api-version=…): it goes after the base URL's own.
	ep, query, _ := strings.Cut(string(e), "?")
	base, path, p := o.Upstreams[d.Name], d.TrimVersion(ep), d.Name
	if name, rest, ok := registry.SplitNamed(ep); ok {
		if base = o.Named[name]; base == "" {
			return nil, fmt.Errorf("no upstream named %s: give --upstream %s=URL", name, name)
		}
		path = d.TrimVersion(rest)
	} else if base == "" && d.DefaultUpstream == "" {
		return nil, fmt.Errorf("no %s upstream: give --%s", p, d.UpstreamFlag())
	}
	u, err := serve.ParseUpstream(base, d.DefaultUpstream) // a {placeholder} host is kept
	if err != nil {
		// Not quoted: the value may hold a key and cannot be redacted.
		return nil, fmt.Errorf("the %s upstream is not a URL", p)
	}
	c := *u
	c.Path = strings.TrimRight(c.Path, "/") + path
	c.RawPath = ""
	switch {
	case query == "":
	case c.RawQuery == "":
		c.RawQuery = query
	default:
		c.RawQuery += "&" + query
	}
	return &c, nil
}

// liveBody is the JSON the format posts for a stored request
// (Format.LiveBody: without the transport-only stream fields).
func liveBody(f provider.Format, request map[string]any) ([]byte, error) {
	m := f.LiveBody(request)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sendLive posts s's request once; prev, when set, replaces a chained
// request's previous_response_id (the parent's live answer id).
func sendLive(ctx context.Context, client *http.Client, o LiveOptions, s *check.Snapshot, prev string) liveRun {
	if ctx.Err() != nil {
		return liveRun{err: "interrupted"}
	}
	format, err := registry.ForStored(s.Provider, provider.Endpoint(s.Record.Endpoint))
	if err != nil {
		return liveRun{err: err.Error()}
	}
	// The stored endpoint: Gemini's names the model and API version.
	p, e := format.Provider(), provider.Endpoint(s.Record.Endpoint)
	request := s.Record.Request
	if prev != "" {
		request = maps.Clone(request)
		request["previous_response_id"] = prev
	}
	body, err := liveBody(format, request)
	if err != nil {
		return liveRun{err: "encode request: " + err.Error()}
	}
	d := registry.Provider(p)
	target, err := liveURL(o, d, e)
	if err != nil {
		return liveRun{err: err.Error()}
	}
	// The URL is set, not parsed from its text: a {placeholder} host
	// (filled in by PrepareUpstream below) has no valid text form.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream.invalid/", bytes.NewReader(body))
	if err != nil {
		return liveRun{err: serve.RedactURLIn(err.Error(), target)}
	}
	req.URL, req.Host = target, ""
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "traceforge-verify-live")
	for k, v := range s.Record.RequestHeaders {
		if sv, ok := v.(string); ok {
			req.Header.Set(k, sv)
		}
	}
	d.LiveAuth(req.Header, o.Keys[p])
	if d.PrepareUpstream != nil {
		// The provider's last word on an outgoing call, as in record
		// (Vertex AI fills the endpoint's location into its default host).
		if err := d.PrepareUpstream(req, body); err != nil {
			return liveRun{err: serve.RedactURLIn(err.Error(), target)}
		}
		target = req.URL
	}
	// A credential never reaches another provider's upstream (SECURITY.md):
	// the upstream's family is its host's when known, else p's.
	to := d.Family
	if f, ok := provider.FamilyOfHost(target.Hostname()); ok {
		to = f
	}
	if cred, ok := provider.ForeignCredential(req.Header, nil, to); ok {
		return liveRun{err: "refused: the request would carry " + cred.Kind + " to the " + string(p) + " upstream, a credential of another provider; nothing was sent (check the key variables given to verify --live)"}
	}
	start := liveNow()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return liveRun{err: "interrupted"}
		}
		return liveRun{err: serve.RedactURLIn(scrubURLError(err), target)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxLiveBody+1))
	if err != nil {
		return liveRun{err: fmt.Sprintf("HTTP %d: reading the answer: %v", resp.StatusCode, err)}
	}
	if len(data) > maxLiveBody {
		return liveRun{err: fmt.Sprintf("HTTP %d: answer larger than %d bytes", resp.StatusCode, maxLiveBody)}
	}
	if resp.StatusCode/100 != 2 {
		// The upstream may quote the key it refused: never into a report.
		msg := check.RedactValues(errorMessage(data), check.CredentialValues(req.Header, req.URL.RawQuery))
		return liveRun{err: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg)}
	}
	m, err := provider.Decode(data)
	if err != nil {
		return liveRun{err: fmt.Sprintf("HTTP %d: the answer is not a JSON object: %v", resp.StatusCode, err)}
	}
	f, err := format.Fields(m)
	if err != nil {
		return liveRun{err: fmt.Sprintf("HTTP %d: %v", resp.StatusCode, err)}
	}
	if o.Totals != nil {
		// Latency: from sending the request to the whole answer read.
		latency := liveNow().Sub(start).Milliseconds()
		model, _ := s.Record.Request["model"].(string)
		o.Totals.Add(s.Provider, string(e), model, snapshot.Response{Fields: f, LatencyMS: latency, Body: m})
	}
	return liveRun{fields: f, body: m}
}

// scrubURLError drops the URL from a transport error's text when it is a
// *url.Error; the upstream is named once in the report instead.
func scrubURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// errorMessage extracts a provider error's message from a body.
func errorMessage(data []byte) string {
	var v struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &v) == nil && v.Error.Message != "" {
		return v.Error.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// project keeps only the live_compare fields of an exception. tool_names
// reduces tool calls to their names.
func project(f snapshot.Fields, compare []string) snapshot.Fields {
	var out snapshot.Fields
	for _, c := range compare {
		switch c {
		case "content":
			out.Content = f.Content
		case "finish_reason":
			out.FinishReason = f.FinishReason
		case "tokens_used":
			out.TokensUsed = f.TokensUsed
		case "model":
			out.Model = f.Model
		case "tool_calls":
			out.ToolCalls = f.ToolCalls
		case "tool_names":
			if out.ToolCalls == nil {
				for _, tc := range provider.ToolCalls(f.ToolCalls) {
					out.ToolCalls = append(out.ToolCalls, map[string]any{"function": map[string]any{"name": tc.Name, "arguments": ""}})
				}
			}
		}
	}
	return out
}

// fieldsDocument renders the compared fields for a unified diff.
func fieldsDocument(f snapshot.Fields) string {
	doc := map[string]any{
		"finish_reason": f.FinishReason,
		"tokens_used":   f.TokensUsed,
		"model":         f.Model,
	}
	if len(f.ToolCalls) > 0 {
		var calls []any
		for _, tc := range f.ToolCalls {
			calls = append(calls, stripIDs(tc))
		}
		doc["tool_calls"] = calls
	}
	b, err := snapshot.MarshalPretty(doc)
	if err != nil {
		return fmt.Sprintf("%+v\n", f)
	}
	// Content on its own lines makes the diff of long answers readable.
	return string(b) + "content:\n" + f.Content + "\n"
}

// stripIDs removes the provider-generated id of a tool call (the one
// equality ignores it).
func stripIDs(tc any) any {
	m, ok := tc.(map[string]any)
	if !ok {
		return tc
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		if k != "id" {
			c[k] = v
		}
	}
	return c
}

// nondetMessage is the specification's three lines.
func nondetMessage(k, n int) string {
	return fmt.Sprintf("❌ Non-deterministic behavior detected\n   %d/%d runs produced different outputs\n   → CI fails", k, n)
}

func judge(display string, s *check.Snapshot, runs []liveRun, failOn []change.Class, interrupted error) result.LiveResult {
	res := result.LiveResult{File: display + "/" + s.Rel, Runs: len(runs)}
	recorded := s.Record.Response.Fields
	recBody := s.Record.Response.Body
	res.Synthesized = recBody == nil
	// fails is the comparison that fails a run: the fail_on classes, or
	// under a policy exception its live_compare fields (DESIGN §12.9 item 7).
	fails := func(a, b snapshot.Fields) bool { return len(classify(a, b).Failing(failOn)) > 0 }
	compare := func(f snapshot.Fields) snapshot.Fields { return f }
	if s.Exception != nil {
		res.ByPolicy = true
		ex := s.Exception
		compare = func(f snapshot.Fields) snapshot.Fields { return project(f, ex.LiveCompare) }
		fails = func(a, b snapshot.Fields) bool { return !provider.Equal(compare(a), compare(b)) }
		cmp := "nothing but success"
		if len(ex.LiveCompare) > 0 {
			cmp = strings.Join(ex.LiveCompare, ", ")
		}
		res.Notes = append(res.Notes, fmt.Sprintf("nondeterministic by policy (model %q matches %q): live runs compare %s", s.Record.Request["model"], ex.Model, cmp))
	}
	var ok []liveRun
	errCount := map[string]int{}
	var errOrder []string
	for _, r := range runs {
		if r.err != "" {
			if errCount[r.err] == 0 {
				errOrder = append(errOrder, r.err)
			}
			errCount[r.err]++
			continue
		}
		ok = append(ok, r)
	}
	for _, e := range errOrder {
		if errCount[e] > 1 {
			e = fmt.Sprintf("%s (%d runs)", e, errCount[e])
		}
		res.Errors = append(res.Errors, e)
	}
	res.Succeeded = len(ok)
	if len(ok) == 0 {
		res.Failed = true
		why := "no live run succeeded"
		if interrupted != nil {
			why += " (interrupted)"
		}
		res.Message = fmt.Sprintf("❌ %s: %d of %d runs failed upstream; nothing to compare with the recording", why, len(runs), len(runs))
		return res
	}
	// shown is the run the report details: the first failing one, else the
	// first that differs at all.
	var shown *liveRun
	var shownResult change.Result
	classes := map[change.Class]bool{}
	changed := 0
	for i := range ok {
		c := classify(recorded, ok[i].fields)
		for _, x := range c.Classes {
			classes[x] = true
		}
		failing := fails(recorded, ok[i].fields)
		if failing {
			res.Different++
		}
		if c.Changed() {
			changed++
		}
		if (failing && (shown == nil || !fails(recorded, shown.fields))) || (shown == nil && c.Changed()) {
			shown, shownResult = &ok[i], c
		}
	}
	for _, c := range change.All {
		if classes[c] {
			res.Classes = append(res.Classes, c)
		}
	}
	if s.Exception == nil {
		res.FailingClasses = change.Result{Classes: res.Classes}.Failing(failOn)
	}
	if shown != nil {
		res.Change = &shownResult
		res.Changes = provider.Diff(recorded, shown.fields)
	}
	allSame := true
	for i := 1; i < len(ok); i++ {
		if fails(ok[0].fields, ok[i].fields) {
			allSame = false
			break
		}
	}
	if res.Different == 0 {
		if changed > 0 {
			res.Notes = append(res.Notes, passingChange(changed, len(ok), res.Classes, shownResult, s.Exception != nil))
		}
		if !res.Synthesized {
			res.Notes = append(res.Notes, provider.Notes(recBody, ok[0].body)...)
		}
		sortNotes(res.Notes)
		return res
	}
	res.Failed = true
	res.Diff = render.UnifiedDiff("recorded "+res.File, "live", fieldsDocument(compare(recorded)), fieldsDocument(compare(shown.fields)))
	if allSame {
		res.Drift = true
		res.Message = fmt.Sprintf("❌ Drift detected\n   %d/%d runs agree with each other but differ from the recording\n   → CI fails", len(ok), len(ok))
	} else {
		res.Nondet = true
		res.Message = nondetMessage(res.Different, len(ok))
	}
	if recorded.Model != shown.fields.Model {
		res.Notes = append(res.Notes, fmt.Sprintf("likely cause: the served model changed (%q → %q)", recorded.Model, shown.fields.Model))
	}
	if !res.Synthesized {
		res.Notes = append(res.Notes, provider.Notes(recBody, shown.body)...)
	}
	sortNotes(res.Notes)
	return res
}

// classify compares a live answer with the recording by the diff classes
// (latency is not compared: a live run's latency is not the recording's).
func classify(recorded, live snapshot.Fields) change.Result {
	return change.Classify(snapshot.Response{Fields: recorded}, snapshot.Response{Fields: live})
}

// passingChange is the note of a snapshot whose live runs differ from the
// recording, but in nothing that fails it.
func passingChange(n, of int, classes []change.Class, shown change.Result, byPolicy bool) string {
	var what []string
	for _, c := range classes {
		what = append(what, string(c))
	}
	if shown.Model != nil {
		what = append(what, fmt.Sprintf("model (%q → %q)", shown.Model.From, shown.Model.To))
	}
	if shown.TokensUsed != nil {
		what = append(what, fmt.Sprintf("tokens_used (%d → %d)", shown.TokensUsed.From, shown.TokensUsed.To))
	}
	why := "not in fail_on"
	if byPolicy {
		why = "not in the exception's live_compare"
	}
	return fmt.Sprintf("%d/%d runs differ from the recording only in %s (%s): passes", n, of, strings.Join(what, ", "), why)
}

// sortNotes puts likely-cause notes (model, system_fingerprint) first,
// keeping the order otherwise.
func sortNotes(notes []string) {
	rank := func(n string) int {
		switch {
		case strings.HasPrefix(n, "nondeterministic by policy"):
			return 0
		case strings.HasPrefix(n, "likely cause"), strings.Contains(n, "system_fingerprint"):
			return 1
		}
		return 2
	}
	sort.SliceStable(notes, func(i, j int) bool { return rank(notes[i]) < rank(notes[j]) })
}
