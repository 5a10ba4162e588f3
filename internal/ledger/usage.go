package ledger

import "github.com/traceforge/traceforge/internal/snapshot"

// Usage is one call's tokens by kind. Input excludes cache tokens (they are
// listed apart); Total is the provider's total. Split is false when the
// call has no usage breakdown, only tokens_used: then Total is all there
// is, and none of it can be priced.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Total      int64
	Split      bool
}

// ExtractUsage turns a call's token counters (the stored usage, or the
// body's counters, see usageCounts) into Usage. This is the one place that
// knows each wire format's usage fields:
//
//   - OpenAI chat, completions, embeddings: prompt_tokens, completion_tokens, total_tokens
//   - OpenAI Responses: input_tokens, output_tokens, total_tokens
//   - Anthropic: input_tokens (cache excluded), output_tokens,
//     cache_read_input_tokens, cache_creation_input_tokens; total = all four
//   - Gemini: promptTokenCount, candidatesTokenCount + thoughtsTokenCount, totalTokenCount
//   - Ollama: prompt_eval_count, eval_count (a missing counter counts 0)
//
// Without any of them the call has only tokensUsed (Split false).
func ExtractUsage(provider, endpoint string, c map[string]int64, tokensUsed int64) Usage {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := c[k]; ok {
				return true
			}
		}
		return false
	}
	total := func(u Usage, key string) Usage {
		if t, ok := c[key]; ok {
			u.Total = t
		} else {
			u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
		}
		return u
	}
	switch {
	case provider == "anthropic" && has("input_tokens", "output_tokens"):
		u := Usage{Input: c["input_tokens"], Output: c["output_tokens"], CacheRead: c["cache_read_input_tokens"], CacheWrite: c["cache_creation_input_tokens"], Split: true}
		u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
		return u
	case provider == "openai" && endpoint == "/v1/responses" && has("input_tokens", "output_tokens"):
		return total(Usage{Input: c["input_tokens"], Output: c["output_tokens"], Split: true}, "total_tokens")
	case provider == "openai" && has("prompt_tokens", "completion_tokens"):
		return total(Usage{Input: c["prompt_tokens"], Output: c["completion_tokens"], Split: true}, "total_tokens")
	case provider == "gemini" && has("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount"):
		return total(Usage{Input: c["promptTokenCount"], Output: c["candidatesTokenCount"] + c["thoughtsTokenCount"], Split: true}, "totalTokenCount")
	case provider == "ollama" && has("prompt_eval_count", "eval_count"):
		return total(Usage{Input: c["prompt_eval_count"], Output: c["eval_count"], Split: true}, "")
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
