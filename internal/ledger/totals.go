package ledger

import (
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Totals accumulates the calls of one run (record, verify --live) for the
// summary's last line and the JSON report. Safe for concurrent use; the
// zero value is not usable, call NewTotals.
type Totals struct {
	mu     sync.Mutex
	prices map[string]check.Price
	acc    *account
}

// NewTotals starts an empty run; prices come from the config (nil: no cost).
func NewTotals(prices map[string]check.Price) *Totals {
	return &Totals{prices: prices, acc: newAccount()}
}

// Add counts one call: its provider, key endpoint, requested model and the
// response fields as stored (usage, tokens_used, latency_ms, model, stream).
func (t *Totals) Add(provider, endpoint, requestModel string, resp snapshot.Response) {
	model := resp.Model
	if model == "" {
		model = requestModel
	}
	u := UsageOf(provider, endpoint, resp)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.add(model, u, resp.LatencyMS, resp.Stream)
}

// Summary is a run's totals as reports carry them (result.Totals; render
// writes its line).
type Summary = result.Totals

// Summary computes the totals so far.
func (t *Totals) Summary() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := row("total", t.acc, t.prices)
	return Summary{Calls: r.Calls, Tokens: r.Tokens, CostUSD: r.CostUSD, UnpricedTokens: r.UnpricedTokens,
		Unpriced: append([]Unpriced{}, r.unpriced...), LatencyMS: r.LatencyMS}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
