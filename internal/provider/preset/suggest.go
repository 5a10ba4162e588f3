package preset

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Set parses the preset's "defaults" into a rule set.
func (p Preset) Set() (*defaults.Set, error) {
	v, err := snapshot.Decode([]byte(p.DefaultsJSON("")))
	if err != nil {
		return nil, err
	}
	return defaults.Parse(v)
}

var (
	detOnce sync.Once
	detSet  *defaults.Set
)

func deterministicSet() *defaults.Set {
	detOnce.Do(func() {
		detSet, _ = deterministic().Set()
	})
	return detSet
}

// Suggest names the "defaults" rule that would have filled missing (a JSON
// pointer into the request, e.g. "/temperature" or "/generationConfig")
// for a request of endpoint, taken from the deterministic preset: `add
// {"model": …, "endpoint": …, "set": {…}} to "defaults" in
// .traceforge.json, or run traceforge init`. ok is false when the preset
// has no value for it (then no default can help).
func Suggest(endpoint string, request map[string]any, missing string) (string, bool) {
	set := deterministicSet()
	if set == nil {
		return "", false
	}
	r := set.For(endpoint, request)
	if r == nil {
		return "", false
	}
	var sets []string
	for _, a := range r.Set {
		if a.Pointer == missing || strings.HasPrefix(a.Pointer, missing+"/") {
			sets = append(sets, snapshot.CanonicalText(a.Pointer)+": "+snapshot.CanonicalText(a.Value))
		}
	}
	if len(sets) == 0 {
		return "", false
	}
	sort.Strings(sets)
	model, _ := request["model"].(string)
	if r.Model.Pattern != "*" {
		model = r.Model.Pattern
	}
	rule := fmt.Sprintf(`{"model": %s, "endpoint": %s`, snapshot.CanonicalText(model), snapshot.CanonicalText(endpoint))
	if len(r.When) > 0 {
		var w []string
		for _, c := range r.When {
			w = append(w, snapshot.CanonicalText(c.Pointer)+": "+snapshot.CanonicalText(c.Value))
		}
		rule += `, "when": {` + strings.Join(w, ", ") + `}`
	}
	rule += `, "set": {` + strings.Join(sets, ", ") + `}}`
	return fmt.Sprintf(`add %s to "defaults" in .traceforge.json (the member is set only when the request lacks it), or run traceforge init, whose preset sets it`, rule), true
}
