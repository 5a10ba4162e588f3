package record_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/replay"
)

// The summary ends with the run's totals: every call the upstream answered
// in the run, priced from the config; --only-missing hits are not counted.
func TestSummaryTotals(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	cfg, err := check.ParseConfig([]byte(`{"prices":{"gpt-4o-mini":{"input":0.15,"output":0.6}}}`))
	if err != nil {
		t.Fatal(err)
	}
	withPrices := func(c *record.Config) { c.Check.Config = cfg }
	p := newProxy(t, dir, fake, withPrices)
	p.do("/v1/chat/completions", openaiChat("First question"), nil)
	p.do("/v1/chat/completions", streamed(openaiChat("Second question")), nil)
	p.do("/v1/messages", anthropicMsg("Third question"), nil)
	s := p.finish()
	if s.Failed() || s.Totals == nil {
		t.Fatalf("%s", summaryText(s))
	}

	// The figures, by hand from the stored usage.
	var in, out, total, anthropic, openaiIn, openaiOut int64
	for _, sn := range verifySet(t, dir).Snapshots {
		u := sn.Record.Response.Usage
		num := func(k string) int64 { n, _ := strconv.ParseInt(fmt.Sprint(u[k]), 10, 64); return n }
		if sn.Provider == "openai" {
			openaiIn += num("prompt_tokens")
			openaiOut += num("completion_tokens")
		} else {
			anthropic += num("input_tokens") + num("output_tokens")
			in += num("input_tokens")
			out += num("output_tokens")
		}
		total += sn.Record.Response.TokensUsed
	}
	in, out = in+openaiIn, out+openaiOut
	sum := s.Totals
	if sum.Calls != 3 || sum.Tokens.Total != total || sum.Tokens.Input != in || sum.Tokens.Output != out || in == 0 || out == 0 {
		t.Fatalf("totals %+v, want 3 calls, %d tokens (%d in, %d out)", sum, total, in, out)
	}
	if sum.UnpricedTokens != anthropic || len(sum.Unpriced) != 1 || sum.Unpriced[0].Model != "claude-sonnet-4-5" {
		t.Errorf("unpriced %d %+v, want the %d Anthropic tokens", sum.UnpricedTokens, sum.Unpriced, anthropic)
	}
	wantCost := math.Round(float64(openaiIn)*0.15+float64(openaiOut)*0.6) / 1e6
	if sum.CostUSD == nil || math.Abs(*sum.CostUSD-wantCost) > 5e-7 {
		t.Errorf("cost %v, want $%.6f (%d prompt × 0.15 + %d completion × 0.6 per 1M)", sum.CostUSD, wantCost, openaiIn, openaiOut)
	}
	text := summaryText(s)
	if !strings.HasSuffix(text, render.TotalsLine(*sum)+"\n") || !strings.HasPrefix(render.TotalsLine(*sum), fmt.Sprintf("totals: 3 calls, %d tokens (%d in, %d out), cost $", total, in, out)) {
		t.Errorf("the summary does not end with the totals line:\n%s", text)
	}

	// --only-missing: the hit is served from the set, only the miss counts.
	p = newProxy(t, dir, fake, func(c *record.Config) { withPrices(c); c.OnlyMissing = replay.NewResponder(dir) })
	p.do("/v1/chat/completions", openaiChat("First question"), nil)
	p.do("/v1/chat/completions", openaiChat("A new question"), nil)
	s = p.finish()
	if s.Served != 1 || s.Recorded != 1 || s.Totals.Calls != 1 {
		t.Fatalf("only-missing totals %+v:\n%s", s.Totals, summaryText(s))
	}
}
