package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// Legacy is the one legacy format (DESIGN §8): a single file
// .ai-snapshots/snapshots.json = {"version": "0.9.0", "snapshots": [...]}.
// providers100 are the providers of format 1.0.0, the target of this step
// (gemini and ollama came with 1.1.0; a legacy record naming them is
// refused like any unknown provider).
var providers100 = func() []string {
	var out []string
	for _, d := range registry.Providers() {
		if d.Since == "1.0.0" {
			out = append(out, string(d.Name))
		}
	}
	slices.Sort(out)
	return out
}()

const (
	LegacyVersion = "0.9.0"
	LegacyFile    = snapshot.LegacyName
)

func init() {
	Register(Step{
		From:     LegacyVersion,
		To:       snapshot.PreviousVersion,
		Describe: "one snapshots.json → one hashed file per call plus manifest.json",
		Apply:    migrateLegacy,
	})
}

// Rules of the problems this step reports (besides the check pipeline's own).
const (
	RuleLegacyFormat    = "legacy-format"
	RuleTampered        = "tampered"
	RuleMissingFunction = "missing-function"
	RuleToolCall        = "tool-call"
	RuleProvider        = "unknown-provider"
	RuleConflict        = "conflicting-duplicates"
	RuleCollision       = check.RuleCollision
)

// toolCallFinishReasons say the model called tools; format 0.9.0 stored no
// tool calls, so such a record cannot be migrated without inventing them.
var toolCallFinishReasons = map[string]bool{"tool_calls": true, "tool_use": true, "function_call": true}

var legacyHashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// LegacyRecordHash is the 0.9.0 record hash: bare lowercase hex of
// sha256(JCS(record without "hash")).
func LegacyRecordHash(rec map[string]any) (string, error) {
	c := make(map[string]any, len(rec))
	for k, v := range rec {
		if k != "hash" {
			c[k] = v
		}
	}
	b, err := snapshot.Canonical(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// legacyRecord is one 0.9.0 record that passed every per-record check.
type legacyRecord struct {
	index    int
	label    string // #i "id"
	provider string
	at       time.Time
	source   source.Source
	request  map[string]any
	resp     snapshot.Response
	key      string
}

func recordLabel(i int, rec map[string]any) string {
	if id, ok := rec["id"].(string); ok {
		return fmt.Sprintf("#%d %s", i, strconv.Quote(id))
	}
	return fmt.Sprintf("#%d", i)
}

func migrateLegacy(in *Set, env Env) (*Set, *result.MigrateStep, error) {
	rep := &result.MigrateStep{From: LegacyVersion, To: snapshot.PreviousVersion}
	display := path.Join(env.Display, LegacyFile)
	problem := func(ptr, record, rule, msg, fix string) {
		rep.Problems = append(rep.Problems, finding.Finding{File: LegacyFile, Pointer: ptr, Subject: record, Rule: rule, Message: msg, Fix: fix})
	}
	data, ok := in.Files[LegacyFile]
	if !ok {
		problem("", "", RuleLegacyFormat, "there is no snapshots.json to migrate", "point --dir at the folder holding the 0.9.0 snapshots.json")
		return nil, rep, nil
	}
	v, err := snapshot.Decode(data)
	if err != nil {
		problem("", "", check.RuleJSON, err.Error(), "restore snapshots.json from Git; a damaged file cannot be migrated")
		return nil, rep, nil
	}
	records, ok := legacyDocument(v, problem)
	if !ok {
		return nil, rep, nil
	}

	var good []*legacyRecord
	for i, rv := range records {
		if lr := legacyRecordOf(i, rv, display, problem, rep); lr != nil {
			good = append(good, lr)
		}
	}

	// Group by request key: equal duplicates merge, different answers stop.
	byKey := map[string][]*legacyRecord{}
	var keys []string
	for _, lr := range good {
		if _, seen := byKey[lr.key]; !seen {
			keys = append(keys, lr.key)
		}
		byKey[lr.key] = append(byKey[lr.key], lr)
	}
	type planned struct {
		keep    *legacyRecord
		members []*legacyRecord
		source  source.Source
		rel     string
		data    []byte
		hash    string
	}
	var plan []*planned
	byID := map[string]string{} // id → key
	for _, key := range keys {
		group := byKey[key]
		sort.SliceStable(group, func(i, j int) bool {
			if !group[i].at.Equal(group[j].at) {
				return group[i].at.Before(group[j].at)
			}
			return group[i].index < group[j].index
		})
		keep := group[0]
		conflict := false
		src := keep.source
		for _, other := range group[1:] {
			if diff := answerDiff(keep.resp, other.resp); diff != "" {
				conflict = true
				problem(fmt.Sprintf("/snapshots/%d/response", other.index), other.label, RuleConflict,
					fmt.Sprintf("same request as record %s (id %s) but a different answer (%s); a snapshot set holds one answer per request",
						keep.label, snapshot.IDOf(key), diff),
					"decide which answer is right: re-record the call (traceforge record), or delete the wrong record from snapshots.json (Git keeps it)")
				continue
			}
			if other.source.Less(src) {
				src = other.source
			}
		}
		if conflict {
			continue
		}
		if prev, taken := byID[snapshot.IDOf(key)]; taken && prev != key {
			problem(fmt.Sprintf("/snapshots/%d", keep.index), keep.label, RuleCollision,
				fmt.Sprintf("id %s is shared by two different requests (keys %s and %s)", snapshot.IDOf(key), prev, key),
				"a 12-character id collision: change one request slightly (e.g. its seed) and re-record it")
			continue
		}
		byID[snapshot.IDOf(key)] = key
		plan = append(plan, &planned{keep: keep, members: group, source: src, rel: snapshot.RelPath(keep.provider, snapshot.IDOf(key))})
	}

	// Build every file and run the check pipeline on the record as the
	// current format holds it (the next step adds only its endpoint), so
	// problems point into snapshots.json.
	for _, p := range plan {
		k := p.keep
		rec, key, err := registry.NewRecord(k.provider, registry.EndpointOf100(k.provider, k.request), k.at, p.source, k.request, nil, k.resp, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", k.label, err)
		}
		if key != k.key {
			return nil, nil, fmt.Errorf("record %s: key changed while building (%s, %s)", k.label, k.key, key)
		}
		cur, err := snapshot.FileDocument(rec)
		if err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", k.label, err)
		}
		curData, err := snapshot.MarshalFile(cur)
		if err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", k.label, err)
		}
		old := maps.Clone(rec)
		delete(old, "endpoint")
		if err := snapshot.Rehash(old); err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", k.label, err)
		}
		doc, err := snapshot.FileDocumentAt(snapshot.PreviousVersion, old)
		if err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", k.label, err)
		}
		p.data, err = snapshot.MarshalFile(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", k.label, err)
		}
		p.hash, _ = doc["hash"].(string)
		_, findings := check.CheckBytes(p.rel, curData, env.Check)
		for _, f := range findings {
			ptr := legacyPointer(f.Pointer, k.index)
			if f.Severity != finding.Error {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s → %s: %s", k.label, p.rel, f.Message))
				continue
			}
			rule, fix := f.Rule, f.Fix
			if rule == check.RuleDeterminism {
				fix = "the migrated snapshot would fail verify: " + fix
			}
			problem(ptr, k.label, rule, f.Message, fix)
		}
	}

	// Items: every input record, in input order.
	target := map[int]*planned{}
	for _, p := range plan {
		for _, m := range p.members {
			target[m.index] = p
		}
	}
	refused := map[int]bool{}
	for _, pr := range rep.Problems {
		if n, ok := recordIndex(pr.Pointer); ok {
			refused[n] = true
		}
	}
	for i, rv := range records {
		rm, _ := rv.(map[string]any)
		it := result.MigrateItem{Source: describeRecord(i, rm)}
		p := target[i]
		switch {
		case refused[i] || p == nil:
			it.Note = "refused: see problems"
		case p.keep.index != i:
			it.Target = p.rel
			it.Note = fmt.Sprintf("merged into %s: same request and answer, earliest timestamp kept", p.keep.label)
		default:
			it.Target = p.rel
			if len(p.members) > 1 && p.source != p.keep.source {
				it.Note = fmt.Sprintf("source %s: the smallest of the merged records", p.source)
			}
		}
		rep.Items = append(rep.Items, it)
	}
	withHeaders := map[string]int{} // providers whose SDKs send a key header 0.9.0 did not store
	for _, p := range plan {
		if d := registry.Provider(provider.Name(p.keep.provider)); d != nil && len(d.KeyHeaders) > 0 {
			withHeaders[p.keep.provider]++
		}
	}
	for _, name := range providers100 {
		if n := withHeaders[name]; n > 0 {
			d := registry.Provider(provider.Name(name))
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d %s snapshot(s) get no request_headers: format 0.9.0 did not store %s "+
				"and migration never guesses it. The official SDKs send that header and it joins the request key, so replay will not match "+
				"their calls to these snapshots; re-record them (traceforge record) to use them with an SDK", n, d.Title, strings.Join(d.KeyHeaders, " or ")))
		}
	}
	files := map[string]bool{}
	for _, it := range rep.Items {
		if it.Target != "" {
			files[it.Target] = true
		}
	}
	rep.Summary = fmt.Sprintf("%d legacy record(s) in %s → %d snapshot file(s)", len(records), LegacyFile, len(files))
	if len(rep.Problems) > 0 {
		return nil, rep, nil
	}

	out := &Set{Version: snapshot.PreviousVersion, Files: map[string][]byte{}}
	var entries []snapshot.ManifestEntry
	earliest := ""
	for _, p := range plan {
		out.Files[p.rel] = p.data
		entries = append(entries, snapshot.ManifestEntry{ID: snapshot.IDOf(p.keep.key), Provider: p.keep.provider, File: p.rel, Hash: p.hash})
		if ts := snapshot.FormatTimestamp(p.keep.at); earliest == "" || ts < earliest {
			earliest = ts
		}
	}
	now := snapshot.FormatTimestamp(env.Now)
	if earliest == "" {
		earliest = now
	}
	man, err := snapshot.BuildManifestAt(snapshot.PreviousVersion, entries, earliest, now)
	if err != nil {
		return nil, nil, err
	}
	out.Files[snapshot.ManifestName], err = snapshot.MarshalManifest(man)
	if err != nil {
		return nil, nil, err
	}
	return out, rep, nil
}

// describeRecord names a raw record for the plan: index, id, provider and
// source as far as they are readable ("?" for what is missing).
func describeRecord(i int, rec map[string]any) string {
	s := recordLabel(i, rec)
	if p, ok := rec["provider"].(string); ok {
		s += " " + p
	}
	if src, ok := rec["source"].(map[string]any); ok {
		part := func(k string) string {
			switch v := src[k].(type) {
			case string:
				if v != "" {
					return v
				}
			case interface{ String() string }:
				return v.String()
			}
			return "?"
		}
		s += " " + part("file") + ":" + part("line") + ":" + part("function")
	}
	return s
}

// recordIndex reads n from a pointer "/snapshots/n/...".
func recordIndex(ptr string) (int, bool) {
	rest, ok := strings.CutPrefix(ptr, "/snapshots/")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	return n, err == nil
}

// legacyPointer maps a pointer into a migrated file back into snapshots.json.
func legacyPointer(ptr string, index int) string {
	base := fmt.Sprintf("/snapshots/%d", index)
	rest, ok := strings.CutPrefix(ptr, "/snapshots/0")
	if !ok {
		return base
	}
	if r, ok := strings.CutPrefix(rest, "/response/tokens_used"); ok {
		rest = "/response/tokens" + r
	}
	return base + rest
}

// answerDiff compares two answers with the project's one equality (DESIGN
// §11): content, finish_reason and tokens_used (0.9.0 has no tool calls or
// served model). Latency never counts.
func answerDiff(a, b snapshot.Response) string {
	var d []string
	if a.Content != b.Content {
		d = append(d, "content differs")
	}
	if a.FinishReason != b.FinishReason {
		d = append(d, fmt.Sprintf("finish_reason %q vs %q", a.FinishReason, b.FinishReason))
	}
	if a.TokensUsed != b.TokensUsed {
		d = append(d, fmt.Sprintf("tokens %d vs %d", a.TokensUsed, b.TokensUsed))
	}
	return strings.Join(d, ", ")
}

// legacyDocument checks the top level: exactly {"version": "0.9.0", "snapshots": [...]}.
func legacyDocument(v any, problem func(ptr, record, rule, msg, fix string)) ([]any, bool) {
	const fix = "snapshots.json is not a 0.9.0 set traceforge can migrate; re-record all snapshots"
	doc, ok := v.(map[string]any)
	if !ok {
		problem("", "", RuleLegacyFormat, "the document is not a JSON object", fix)
		return nil, false
	}
	good := true
	for _, k := range sortedKeys(doc) {
		if k != "version" && k != "snapshots" {
			problem("/"+snapshot.EscapePointer(k), "", RuleLegacyFormat, fmt.Sprintf("unknown top-level field %q (format 0.9.0 has only version and snapshots)", k), fix)
			good = false
		}
	}
	if ver, _ := doc["version"].(string); ver != LegacyVersion {
		problem("/version", "", RuleLegacyFormat, fmt.Sprintf("version is %v, not %q", jsonText(doc["version"]), LegacyVersion), "use the --from matching the file's version")
		good = false
	}
	list, ok := doc["snapshots"].([]any)
	if !ok {
		problem("/snapshots", "", RuleLegacyFormat, "snapshots is missing or not an array", fix)
		good = false
	}
	return list, good
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func jsonText(v any) string {
	if v == nil {
		return "missing"
	}
	b, err := snapshot.Canonical(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

var (
	legacyRecordFields   = map[string]bool{"id": true, "timestamp": true, "provider": true, "source": true, "request": true, "response": true, "hash": true}
	legacySourceFields   = map[string]bool{"file": true, "line": true, "function": true}
	legacyResponseFields = map[string]bool{"content": true, "tokens": true, "latency_ms": true, "finish_reason": true}
)

const rerecordFix = "re-record this call (traceforge record); migration never guesses a value"

// legacyRecordOf checks one 0.9.0 record (hash first) and returns it ready to
// migrate, or nil after reporting every problem it has.
func legacyRecordOf(i int, rv any, display string, problem func(ptr, record, rule, msg, fix string), rep *result.MigrateStep) *legacyRecord {
	base := fmt.Sprintf("/snapshots/%d", i)
	rec, ok := rv.(map[string]any)
	if !ok {
		problem(base, fmt.Sprintf("#%d", i), RuleLegacyFormat, "the record is not a JSON object", rerecordFix)
		return nil
	}
	label := recordLabel(i, rec)
	n := len(rep.Problems)
	bad := func(ptr, rule, msg, fix string) { problem(base+ptr, label, rule, msg, fix) }

	// 1. The hash, before anything else is believed.
	stored, ok := rec["hash"].(string)
	switch {
	case !ok:
		bad("/hash", RuleTampered, "the record has no hash, so nothing proves it is unedited; migration never launders unverified data",
			"restore snapshots.json from Git or re-record this call")
		return nil
	case !legacyHashPattern.MatchString(stored):
		bad("/hash", RuleLegacyFormat, fmt.Sprintf("hash %q is not a 0.9.0 hash (64 lowercase hex characters, no prefix)", stored),
			"use the --from matching the file's version, or restore snapshots.json from Git")
		return nil
	}
	computed, err := LegacyRecordHash(rec)
	if err != nil {
		bad("", check.RuleJSON, err.Error(), rerecordFix)
		return nil
	}
	if computed != stored {
		bad("/hash", RuleTampered, fmt.Sprintf("record hash mismatch: stored %s, computed %s — the record was edited after it was recorded; migration never launders edited data", stored, computed),
			"restore snapshots.json from Git (git checkout -- "+display+"), or re-record this call")
		return nil
	}

	// 2. Shape: every field of 0.9.0, nothing else.
	for _, k := range sortedKeys(rec) {
		if !legacyRecordFields[k] {
			bad("/"+snapshot.EscapePointer(k), RuleLegacyFormat, fmt.Sprintf("unknown field %q: format 0.9.0 has no such field and 1.0.0 could not hold it", k), rerecordFix)
		}
	}
	for _, k := range []string{"id", "timestamp", "provider", "source", "request", "response"} {
		if _, ok := rec[k]; !ok {
			bad("/"+k, RuleLegacyFormat, fmt.Sprintf("required field %q is missing", k), rerecordFix)
		}
	}
	lr := &legacyRecord{index: i, label: label}
	if id, ok := rec["id"].(string); !ok || id == "" {
		if _, present := rec["id"]; present {
			bad("/id", RuleLegacyFormat, "id must be a non-empty string", rerecordFix)
		}
	}
	if ts, ok := rec["timestamp"].(string); ok {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			bad("/timestamp", RuleLegacyFormat, fmt.Sprintf("timestamp %q is not an RFC 3339 date-time", ts), rerecordFix)
		}
		lr.at = t
	} else if _, present := rec["timestamp"]; present {
		bad("/timestamp", RuleLegacyFormat, "timestamp must be a string", rerecordFix)
	}
	if p, ok := rec["provider"].(string); ok {
		if !slices.Contains(providers100, p) {
			bad("/provider", RuleProvider, fmt.Sprintf("unknown provider %q; format 1.0.0 holds %s snapshots only", p, strings.Join(providers100, " and ")),
				"remove the record from snapshots.json, or record the call again against an endpoint of one of them")
		}
		lr.provider = p
	} else if _, present := rec["provider"]; present {
		bad("/provider", RuleLegacyFormat, "provider must be a string", rerecordFix)
	}
	if src, ok := rec["source"].(map[string]any); ok {
		for _, k := range sortedKeys(src) {
			if !legacySourceFields[k] {
				bad("/source/"+snapshot.EscapePointer(k), RuleLegacyFormat, fmt.Sprintf("unknown field source.%s", k), rerecordFix)
			}
		}
		if f, ok := src["file"].(string); ok && f != "" {
			lr.source.File = f
		} else {
			bad("/source/file", RuleLegacyFormat, "source.file must be a non-empty string", rerecordFix)
		}
		if line, ok := snapshot.Int64(src["line"]); ok && line >= 1 {
			lr.source.Line = int(line)
		} else {
			bad("/source/line", RuleLegacyFormat, "source.line must be an integer ≥ 1", rerecordFix)
		}
		switch fn := src["function"].(type) {
		case string:
			if fn != "" {
				lr.source.Function = fn
				break
			}
			bad("/source/function", RuleMissingFunction, "source.function is empty; format 1.0.0 requires the calling function and migration never guesses it",
				"re-record this call (traceforge record) with X-Traceforge-Source set by the helpers (docs/sources.md)")
		case nil:
			bad("/source/function", RuleMissingFunction, "source.function is missing; format 1.0.0 requires the calling function and migration never guesses it",
				"re-record this call (traceforge record) with X-Traceforge-Source set by the helpers (docs/sources.md)")
		default:
			bad("/source/function", RuleLegacyFormat, "source.function must be a string", rerecordFix)
		}
	} else if _, present := rec["source"]; present {
		bad("/source", RuleLegacyFormat, "source must be an object", rerecordFix)
	}
	if req, ok := rec["request"].(map[string]any); ok {
		lr.request = make(map[string]any, len(req))
		for k, v := range req {
			lr.request[k] = v
		}
		if slices.Contains(providers100, lr.provider) {
			registry.NormalizeStored(lr.provider, registry.EndpointOf100(lr.provider, lr.request), lr.request)
		}
	} else if _, present := rec["request"]; present {
		bad("/request", RuleLegacyFormat, "request must be an object", rerecordFix)
	}
	if resp, ok := rec["response"].(map[string]any); ok {
		for _, k := range sortedKeys(resp) {
			if !legacyResponseFields[k] {
				msg := fmt.Sprintf("unknown field response.%s: format 0.9.0 has no such field", k)
				if k == "tool_calls" {
					msg = "response.tool_calls is not part of format 0.9.0"
				}
				bad("/response/"+snapshot.EscapePointer(k), RuleLegacyFormat, msg, rerecordFix)
			}
		}
		if c, ok := resp["content"].(string); ok {
			lr.resp.Content = c
		} else {
			bad("/response/content", RuleLegacyFormat, "response.content must be a string", rerecordFix)
		}
		if t, ok := snapshot.Int64(resp["tokens"]); ok && t >= 0 {
			lr.resp.TokensUsed = t
		} else {
			bad("/response/tokens", RuleLegacyFormat, "response.tokens must be an integer ≥ 0", rerecordFix)
		}
		if l, ok := snapshot.Int64(resp["latency_ms"]); ok && l >= 0 {
			lr.resp.LatencyMS = l
		} else {
			bad("/response/latency_ms", RuleLegacyFormat, "response.latency_ms must be an integer ≥ 0", rerecordFix)
		}
		if fr, ok := resp["finish_reason"].(string); ok && fr != "" {
			lr.resp.FinishReason = fr
			if toolCallFinishReasons[fr] {
				bad("/response/finish_reason", RuleToolCall,
					fmt.Sprintf("finish_reason %q means the model called tools, but format 0.9.0 stored no tool calls; migrating would invent them", fr),
					"re-record this call (traceforge record) so the snapshot holds the tool calls")
			}
		} else {
			bad("/response/finish_reason", RuleLegacyFormat, "response.finish_reason must be a non-empty string", rerecordFix)
		}
	} else if _, present := rec["response"]; present {
		bad("/response", RuleLegacyFormat, "response must be an object", rerecordFix)
	}
	if len(rep.Problems) > n {
		return nil
	}
	key, err := registry.RequestKey(lr.provider, registry.EndpointOf100(lr.provider, lr.request), lr.request, nil, nil)
	if err != nil {
		bad("/request", check.RuleJSON, err.Error(), rerecordFix)
		return nil
	}
	lr.key = key
	return lr
}
