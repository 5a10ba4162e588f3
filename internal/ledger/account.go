package ledger

import (
	"math"
	"math/big"
	"sort"
	"strconv"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/result"
)

// Tokens are token sums by kind (result.Tokens). Unsplit counts tokens of
// calls that have only tokens_used (no input/output breakdown); they are
// part of Total.
type Tokens = result.Tokens

// addTokens adds one call's usage to t.
func addTokens(t *Tokens, u Usage) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Total += u.Total
	if !u.Split {
		t.Unsplit += u.Total
	}
}

// Latency is p50, p95 (nearest rank) and max of latency_ms.
type Latency = result.Latency

// NearestRank returns the p-th percentile of sorted by the nearest-rank
// method: the value at rank ceil(p/100 × n); 0 when empty.
func NearestRank(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Unpriced is tokens of one model that the config's prices do not cover.
type Unpriced = result.Unpriced

// Reasons tokens are left unpriced.
const (
	ReasonNoPrice      = "no price for this model"
	ReasonNoCacheRead  = "cache-read tokens without a cache_read price"
	ReasonNoCacheWrite = "cache-write tokens without a cache_write price"
	ReasonNoBreakdown  = "tokens_used only, no input/output usage"
)

// account accumulates calls: counts, token sums (overall and per model, for
// pricing) and latencies.
type account struct {
	calls    int
	streamed int
	tokens   Tokens
	byModel  map[string]*Tokens
	latency  []int64
}

func newAccount() *account { return &account{byModel: map[string]*Tokens{}} }

func (a *account) add(model string, u Usage, latencyMS int64, stream bool) {
	a.calls++
	if stream {
		a.streamed++
	}
	addTokens(&a.tokens, u)
	t := a.byModel[model]
	if t == nil {
		t = &Tokens{}
		a.byModel[model] = t
	}
	addTokens(t, u)
	a.latency = append(a.latency, latencyMS)
}

func (a *account) latencies() Latency {
	sort.Slice(a.latency, func(i, j int) bool { return a.latency[i] < a.latency[j] })
	l := Latency{P50: NearestRank(a.latency, 50), P95: NearestRank(a.latency, 95)}
	if n := len(a.latency); n > 0 {
		l.Max = a.latency[n-1]
	}
	return l
}

// cost prices the account's tokens: Σ tokens ÷ 1e6 × price per kind, per
// model, computed exactly (prices as the decimals written in the config)
// and rounded half up to 6 decimals. priced is false when no token had a
// price; unpriced lists what was left out, by model and reason, sorted.
func (a *account) cost(prices map[string]check.Price) (usd float64, priced bool, unpriced []Unpriced) {
	models := make([]string, 0, len(a.byModel))
	for m := range a.byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	sum := new(big.Rat)
	add := func(tokens int64, price float64) {
		sum.Add(sum, new(big.Rat).Mul(big.NewRat(tokens, 1e6), decimal(price)))
	}
	for _, m := range models {
		t := a.byModel[m]
		p, ok := prices[m]
		if !ok {
			if t.Total > 0 {
				unpriced = append(unpriced, Unpriced{Model: m, Tokens: t.Total, Reason: ReasonNoPrice})
			}
			continue
		}
		priced = priced || t.Total > t.Unsplit || t.Total == 0
		add(t.Input, p.Input)
		add(t.Output, p.Output)
		if t.CacheRead > 0 {
			if p.CacheRead != nil {
				add(t.CacheRead, *p.CacheRead)
			} else {
				unpriced = append(unpriced, Unpriced{Model: m, Tokens: t.CacheRead, Reason: ReasonNoCacheRead})
			}
		}
		if t.CacheWrite > 0 {
			if p.CacheWrite != nil {
				add(t.CacheWrite, *p.CacheWrite)
			} else {
				unpriced = append(unpriced, Unpriced{Model: m, Tokens: t.CacheWrite, Reason: ReasonNoCacheWrite})
			}
		}
		if t.Unsplit > 0 {
			unpriced = append(unpriced, Unpriced{Model: m, Tokens: t.Unsplit, Reason: ReasonNoBreakdown})
		}
	}
	return roundMicro(sum), priced, unpriced
}

// decimal is a price as the decimal the config wrote (the shortest
// representation of the float64 it was parsed into), exactly.
func decimal(f float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return r
}

// roundMicro rounds a non-negative amount half up to 6 decimals.
func roundMicro(r *big.Rat) float64 {
	scaled := new(big.Rat).Mul(r, big.NewRat(1e6, 1))
	num := new(big.Int).Mul(scaled.Num(), big.NewInt(2))
	num.Add(num, scaled.Denom())
	den := new(big.Int).Mul(scaled.Denom(), big.NewInt(2))
	micros := new(big.Int).Quo(num, den)
	f, _ := strconv.ParseFloat(micros.String()+"e-6", 64)
	return f
}
