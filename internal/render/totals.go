package render

import (
	"fmt"
	"strings"

	"github.com/traceforge/traceforge/internal/result"
)

// TotalsLine is a run's totals as the last line of its summary, e.g.
//
//	totals: 12 calls, 3,456 tokens (2,000 in, 1,456 out), cost $0.001234, latency p50 450ms p95 900ms
//
// The cost part reads "cost $X (+N unpriced tokens)" when some tokens have no
// price, and is left out when nothing is priced.
func TotalsLine(s result.Totals) string {
	var b strings.Builder
	fmt.Fprintf(&b, "totals: %d call%s, %s tokens", s.Calls, plural(s.Calls), result.Thousands(s.Tokens.Total))
	if s.Tokens.Input+s.Tokens.Output > 0 {
		fmt.Fprintf(&b, " (%s in, %s out", result.Thousands(s.Tokens.Input), result.Thousands(s.Tokens.Output))
		if c := s.Tokens.CacheRead + s.Tokens.CacheWrite; c > 0 {
			fmt.Fprintf(&b, ", %s cache", result.Thousands(c))
		}
		b.WriteString(")")
	}
	if s.CostUSD != nil {
		fmt.Fprintf(&b, ", cost $%.6f", *s.CostUSD)
		if s.UnpricedTokens > 0 {
			fmt.Fprintf(&b, " (+%s unpriced tokens)", result.Thousands(s.UnpricedTokens))
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
