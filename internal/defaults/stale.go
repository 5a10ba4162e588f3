package defaults

import (
	"bytes"
	"slices"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Original returns a copy of a stored request without the members its
// defaults_applied lists: the request as the application sent it. A parent
// object left empty by the removal is removed too (the default created it;
// an application that sent an empty object there is keyed as if it had
// not — documented in docs/format.md). request is not modified.
func Original(request map[string]any, applied []string) map[string]any {
	out := provider.DeepCopy(request).(map[string]any)
	for _, p := range applied {
		toks, err := parsePointer(p)
		if err != nil {
			continue
		}
		remove(out, toks)
	}
	return out
}

// remove deletes toks from m and reports whether m is left empty.
func remove(m map[string]any, toks []string) bool {
	if len(toks) == 1 {
		delete(m, toks[0])
		return len(m) == 0
	}
	child, ok := m[toks[0]].(map[string]any)
	if !ok {
		return false
	}
	if remove(child, toks[1:]) {
		delete(m, toks[0])
	}
	return len(m) == 0
}

// Restate computes a stored request under the current defaults: the
// application's request (Original) with s applied again. It returns that
// request, the pointers s sets, and whether either differs from what is
// stored (then the record's id, request and defaults_applied were made
// under another config: `snapshot reindex --rekey` rewrites them).
func Restate(s *Set, endpoint provider.Endpoint, request map[string]any, applied []string) (map[string]any, []string, bool) {
	if s.Len() == 0 && len(applied) == 0 {
		return request, nil, false
	}
	orig := Original(request, applied)
	now := s.ApplyDefaults(endpoint, orig)
	if !slices.Equal(now, applied) {
		return orig, now, true
	}
	a, err1 := snapshot.Canonical(orig)
	b, err2 := snapshot.Canonical(request)
	if err1 != nil || err2 != nil {
		return orig, now, true
	}
	return orig, now, !bytes.Equal(a, b)
}

// Mark stores applied as the record's defaults_applied (nothing when empty)
// and rehashes the record.
func Mark(rec map[string]any, applied []string) error {
	if _, had := rec[Field]; !had && len(applied) == 0 {
		return nil
	}
	delete(rec, Field)
	if len(applied) > 0 {
		list := make([]any, len(applied))
		for i, p := range applied {
			list[i] = p
		}
		rec[Field] = list
	}
	return snapshot.Rehash(rec)
}

// AppliedOf reads a stored record's defaults_applied.
func AppliedOf(rec map[string]any) []string {
	list, _ := rec[Field].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
