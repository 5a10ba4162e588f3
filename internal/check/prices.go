package check

import (
	"fmt"
	"math"
	"sort"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Price is what one model costs, in USD per 1M tokens (the config's
// "prices" entry). CacheRead and CacheWrite are optional: without them,
// Anthropic cache tokens are counted as unpriced, never guessed.
type Price struct {
	Input      float64
	Output     float64
	CacheRead  *float64
	CacheWrite *float64
}

// parsePrices reads the "prices" object: {"MODEL": {"input": N, "output": N,
// "cache_read"?: N, "cache_write"?: N}}, every number ≥ 0.
func parsePrices(v any) (map[string]Price, error) {
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("/prices must be an object: {\"MODEL\": {\"input\": USD_PER_1M, \"output\": USD_PER_1M}}")
	}
	models := make([]string, 0, len(top))
	for m := range top {
		models = append(models, m)
	}
	sort.Strings(models) // the first problem reported does not depend on map order
	out := make(map[string]Price, len(top))
	for _, model := range models {
		ptr := "/prices/" + snapshot.EscapePointer(model)
		if model == "" {
			return nil, fmt.Errorf("%s: the model name is empty; use the model name the stats show", ptr)
		}
		em, ok := top[model].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s must be an object like {\"input\": 0.15, \"output\": 0.6} (USD per 1M tokens)", ptr)
		}
		fields := make([]string, 0, len(em))
		for k := range em {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		var p Price
		var have int
		for _, k := range fields {
			if k != "input" && k != "output" && k != "cache_read" && k != "cache_write" {
				return nil, fmt.Errorf("%s: unknown field %q (allowed: input, output, cache_read, cache_write)", ptr, k)
			}
			f, ok := snapshot.Float64(em[k])
			if !ok || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("%s/%s must be a number ≥ 0 (USD per 1M tokens)", ptr, k)
			}
			switch k {
			case "input":
				p.Input, have = f, have|1
			case "output":
				p.Output, have = f, have|2
			case "cache_read":
				p.CacheRead = &f
			case "cache_write":
				p.CacheWrite = &f
			}
		}
		if have&1 == 0 {
			return nil, fmt.Errorf("%s/input is required (USD per 1M input tokens)", ptr)
		}
		if have&2 == 0 {
			return nil, fmt.Errorf("%s/output is required (USD per 1M output tokens)", ptr)
		}
		out[model] = p
	}
	return out, nil
}
