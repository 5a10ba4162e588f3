package check

import (
	"fmt"
	"strings"

	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/finding"
	pv "github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/preset"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// defaultsFindings reports a record whose request was completed under
// other request defaults than the config's (DESIGN §13.2): the
// application's unchanged request no longer gives the stored one, so replay
// would miss it. `snapshot reindex --rekey` rewrites the members the
// defaults set, defaults_applied and the id.
func defaultsFindings(file string, rec *snapshot.Record, cfg *Config) finding.Findings {
	var set *defaults.Set
	if cfg != nil {
		set = cfg.Defaults
	}
	applied := defaults.AppliedOf(rec.Raw)
	if set.Len() == 0 && len(applied) == 0 {
		return nil
	}
	now, nowApplied, stale := defaults.Restate(set, pv.Endpoint(rec.Endpoint), rec.Request, applied)
	if !stale {
		return nil
	}
	return finding.Findings{{File: file, Pointer: "/snapshots/0/" + defaults.Field, Rule: RuleRekey, Severity: finding.Error,
		Message: fmt.Sprintf("the request was completed by request defaults %s; under the \"defaults\" of %s the same call becomes %s",
			describeDefaults(rec.Request, applied), ConfigName, describeDefaults(now, nowApplied)),
		Fix: RekeyFix + "; it rewrites the members the defaults set (the answer stays the one recorded: re-record the call for a fresh one)"}}
}

// describeDefaults lists pointers with their values in request.
func describeDefaults(request map[string]any, applied []string) string {
	if len(applied) == 0 {
		return "[] (none)"
	}
	vals, err := defaults.Values(request, applied)
	parts := make([]string, len(applied))
	for i, p := range applied {
		parts[i] = p
		if err == nil {
			parts[i] += "=" + snapshot.CanonicalText(vals[i])
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// rekeyedFindings checks a record whose request rekey rewrote under the
// current defaults: every per-file rule must pass (a rule removed from
// "defaults" can leave a required field missing, a changed value can break
// the determinism policy).
func rekeyedFindings(rec map[string]any, s *Snapshot, opts Options) finding.Findings {
	doc, err := snapshot.FileDocument(rec)
	if err != nil {
		return finding.Findings{{File: s.Rel, Rule: RuleRekey, Severity: finding.Error, Message: err.Error()}}
	}
	id, _ := rec["id"].(string)
	rel := snapshot.RelPath(s.Provider, id)
	o := opts
	o.Built = nil
	_, fs := CheckDocument(rel, s.Provider, doc, o)
	var out finding.Findings
	for _, f := range fs {
		if f.Severity == finding.Error && f.Rule != RuleLineage {
			f.File = s.Rel
			f.Message = "under the current \"defaults\" of " + ConfigName + ": " + f.Message
			f.Fix = "change \"defaults\" so this call stays complete, or re-record it"
			out = append(out, f)
		}
	}
	return out
}

// withDefaultsFixes gives every finding about a missing request member
// (schema or determinism policy) the fix that names the "defaults" rule
// that would fill it (DESIGN §13.2), when the deterministic preset has one.
func withDefaultsFixes(doc map[string]any, fs finding.Findings) finding.Findings {
	const rp = "/snapshots/0/request/"
	for i := range fs {
		f := &fs[i]
		if f.Severity != finding.Error || !strings.HasPrefix(f.Pointer, rp) || !strings.Contains(f.Message, "missing") {
			continue
		}
		recs, _ := doc["snapshots"].([]any)
		if len(recs) == 0 {
			return fs
		}
		rec, _ := recs[0].(map[string]any)
		endpoint, _ := rec["endpoint"].(string)
		req, _ := rec["request"].(map[string]any)
		if req == nil {
			return fs
		}
		if fix, ok := preset.Suggest(endpoint, req, "/"+f.Pointer[len(rp):]); ok {
			if f.Fix != "" {
				fix += "; otherwise: " + f.Fix
			}
			f.Fix = fix
		}
	}
	return fs
}
