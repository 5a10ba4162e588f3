package ledger

import (
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Usage is one call's tokens by kind. Input excludes cache tokens (they are
// listed apart); Total is the provider's total. Split is false when the
// call has no usage breakdown, only tokens_used: then Total is all there
// is, and none of it can be priced.
type Usage = provider.TokenUsage

// ExtractUsage turns a call's token counters (the stored usage, or the
// body's counters, see usageCounts) into Usage: the provider's descriptor
// reads its own usage fields (Descriptor.Usage). Without any of them the
// call has only tokensUsed (Split false).
func ExtractUsage(p, endpoint string, c map[string]int64, tokensUsed int64) Usage {
	if d := registry.Provider(provider.Name(p)); d != nil && d.Usage != nil {
		if u, ok := d.Usage(endpoint, c); ok {
			return u
		}
	}
	return Usage{Total: tokensUsed}
}

// UsageOf is ExtractUsage for a response already in memory (record and
// verify --live have the whole snapshot.Response): the stored usage, else
// the body's counters.
func UsageOf(provider, endpoint string, resp snapshot.Response) Usage {
	counts := map[string]int64{}
	add := func(m map[string]any) {
		for k, v := range m {
			if n, ok := snapshot.Int64(v); ok {
				counts[k] = n
			}
		}
	}
	switch {
	case resp.Usage != nil:
		add(resp.Usage)
	case resp.Body != nil:
		if m, ok := resp.Body["usage"].(map[string]any); ok {
			add(m)
		} else if m, ok := resp.Body["usageMetadata"].(map[string]any); ok {
			add(m)
		} else {
			add(map[string]any{"prompt_eval_count": resp.Body["prompt_eval_count"], "eval_count": resp.Body["eval_count"]})
		}
	}
	return ExtractUsage(provider, endpoint, counts, resp.TokensUsed)
}
