package ledger

import (
	"fmt"
	"strings"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
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

// Summary is a run's totals as reports carry them.
type Summary struct {
	Calls          int        `json:"calls"`
	Tokens         Tokens     `json:"tokens"`
	CostUSD        *float64   `json:"cost_usd"` // null when nothing is priced
	UnpricedTokens int64      `json:"unpriced_tokens"`
	Unpriced       []Unpriced `json:"unpriced"`
	LatencyMS      Latency    `json:"latency_ms"`
}

// Summary computes the totals so far.
func (t *Totals) Summary() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := row("total", t.acc, t.prices)
	return Summary{Calls: r.Calls, Tokens: r.Tokens, CostUSD: r.CostUSD, UnpricedTokens: r.UnpricedTokens,
		Unpriced: append([]Unpriced{}, r.unpriced...), LatencyMS: r.LatencyMS}
}

// Line is the summary's last line, e.g.
//
//	totals: 12 calls, 3,456 tokens (2,000 in, 1,456 out), cost $0.001234, latency p50 450ms p95 900ms
//
// The cost part reads "cost $X (+N unpriced tokens)" when some tokens have no
// price, and is left out when nothing is priced.
func (s Summary) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "totals: %d call%s, %s tokens", s.Calls, plural(s.Calls), thousands(s.Tokens.Total))
	if s.Tokens.Input+s.Tokens.Output > 0 {
		fmt.Fprintf(&b, " (%s in, %s out", thousands(s.Tokens.Input), thousands(s.Tokens.Output))
		if c := s.Tokens.CacheRead + s.Tokens.CacheWrite; c > 0 {
			fmt.Fprintf(&b, ", %s cache", thousands(c))
		}
		b.WriteString(")")
	}
	if s.CostUSD != nil {
		fmt.Fprintf(&b, ", cost $%.6f", *s.CostUSD)
		if s.UnpricedTokens > 0 {
			fmt.Fprintf(&b, " (+%s unpriced tokens)", thousands(s.UnpricedTokens))
		}
	}
	fmt.Fprintf(&b, ", latency p50 %dms p95 %dms", s.LatencyMS.P50, s.LatencyMS.P95)
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
