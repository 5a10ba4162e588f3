package ledger

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/result"

	"github.com/traceforge/traceforge/internal/check"
)

// Groupings of snapshot stats (--by).
var Groupings = []string{"provider", "model", "source", "endpoint"}

// ValidGrouping reports whether by is one of Groupings.
func ValidGrouping(by string) bool {
	for _, g := range Groupings {
		if g == by {
			return true
		}
	}
	return false
}

// groupKey is the value entry e is grouped under.
func groupKey(e *Entry, by string) string {
	if pattern, ok := registry.ExchangePattern(provider.Name(e.Provider), provider.Endpoint(e.Endpoint)); ok {
		// An exchange (DESIGN §13.4) has no model and no tokens: the
		// exchanges group apart, by route under --by endpoint.
		switch by {
		case "endpoint":
			return e.Provider + " exchange " + pattern
		case "model":
			return "(exchanges)"
		}
	}
	switch by {
	case "provider":
		return e.Provider
	case "source":
		return e.Source.Display()
	case "endpoint":
		return e.Provider + " " + e.Endpoint
	default:
		return e.Model()
	}
}

// Row is one group's (or the whole set's) figures.
type Row struct {
	Key            string     `json:"key"`
	Calls          int        `json:"calls"`
	Tokens         Tokens     `json:"tokens"`
	LatencyMS      Latency    `json:"latency_ms"`
	Streamed       int        `json:"streamed"`
	StreamedShare  float64    `json:"streamed_share"`
	CostUSD        *float64   `json:"cost_usd"` // null when none of the tokens is priced
	UnpricedTokens int64      `json:"unpriced_tokens"`
	unpriced       []Unpriced // by model and reason
}

// Report is the outcome of snapshot stats.
type Report struct {
	By       string     `json:"by"`
	Groups   []Row      `json:"groups"`
	Total    Row        `json:"total"`
	Unpriced []Unpriced `json:"unpriced"` // every model and reason left unpriced, sorted
	Priced   bool       `json:"prices_configured"`
}

func row(key string, a *account, prices map[string]check.Price) Row {
	r := Row{Key: key, Calls: a.calls, Tokens: a.tokens, LatencyMS: a.latencies(), Streamed: a.streamed}
	if a.calls > 0 {
		r.StreamedShare = roundShare(float64(a.streamed) / float64(a.calls))
	}
	usd, priced, unpriced := a.cost(prices)
	if priced {
		r.CostUSD = &usd
	}
	r.unpriced = unpriced
	for _, u := range unpriced {
		r.UnpricedTokens += u.Tokens
	}
	return r
}

func roundShare(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// Tally adds up entries as they are read, keeping only counts, token sums
// and one latency per call.
type Tally struct {
	by     string
	groups map[string]*account
	all    *account
}

// NewTally groups by `by` (provider, model, source or endpoint).
func NewTally(by string) *Tally {
	return &Tally{by: by, groups: map[string]*account{}, all: newAccount()}
}

// Add counts one call.
func (t *Tally) Add(e *Entry) {
	k := groupKey(e, t.by)
	a := t.groups[k]
	if a == nil {
		a = newAccount()
		t.groups[k] = a
	}
	a.add(e.Model(), e.Usage, e.LatencyMS, e.Stream)
	t.all.add(e.Model(), e.Usage, e.LatencyMS, e.Stream)
}

// Report prices the tally. Groups are ordered by total tokens, largest
// first, then by key; the result does not depend on the order of Add.
func (t *Tally) Report(prices map[string]check.Price) *Report {
	rep := &Report{By: t.by, Priced: len(prices) > 0, Groups: make([]Row, 0, len(t.groups))}
	for k, a := range t.groups {
		rep.Groups = append(rep.Groups, row(k, a, prices))
	}
	sort.Slice(rep.Groups, func(i, j int) bool {
		a, b := rep.Groups[i], rep.Groups[j]
		if a.Tokens.Total != b.Tokens.Total {
			return a.Tokens.Total > b.Tokens.Total
		}
		return a.Key < b.Key
	})
	rep.Total = row("total", t.all, prices)
	rep.Unpriced = append([]Unpriced{}, rep.Total.unpriced...)
	return rep
}

// Stats is a Tally of entries.
func Stats(entries []Entry, by string, prices map[string]check.Price) *Report {
	t := NewTally(by)
	for i := range entries {
		t.Add(&entries[i])
	}
	return t.Report(prices)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the report as a table, the totals last, then what is
// unpriced and how to price it.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tCALLS\tINPUT\tOUTPUT\tCACHE R/W\tTOTAL\tP50\tP95\tMAX\tSTREAMED\tCOST\n", strings.ToUpper(r.By))
	line := func(x Row) {
		cache := "-"
		if x.Tokens.CacheRead+x.Tokens.CacheWrite > 0 {
			cache = fmt.Sprintf("%s/%s", result.Thousands(x.Tokens.CacheRead), result.Thousands(x.Tokens.CacheWrite))
		}
		cost := "-"
		if x.CostUSD != nil {
			cost = fmt.Sprintf("$%.6f", *x.CostUSD)
			if x.UnpricedTokens > 0 {
				cost += "*"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%dms\t%dms\t%dms\t%.0f%%\t%s\n", x.Key, x.Calls,
			result.Thousands(x.Tokens.Input), result.Thousands(x.Tokens.Output), cache, result.Thousands(x.Tokens.Total),
			x.LatencyMS.P50, x.LatencyMS.P95, x.LatencyMS.Max, x.StreamedShare*100, cost)
	}
	for _, g := range r.Groups {
		line(g)
	}
	line(r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Total.Tokens.Unsplit > 0 {
		fmt.Fprintf(w, "\n%s of the tokens come from calls with only tokens_used (no usage breakdown): counted in TOTAL, not in INPUT or OUTPUT.\n", result.Thousands(r.Total.Tokens.Unsplit))
	}
	if r.Total.Tokens.CacheRead+r.Total.Tokens.CacheWrite > 0 {
		fmt.Fprintln(w, "\nINPUT excludes Anthropic cache tokens; CACHE R/W lists them (cache read / cache write).")
	}
	switch {
	case !r.Priced && r.Total.Calls > 0:
		fmt.Fprintf(w, "\nNo cost: %s has no \"prices\". Add USD per 1M tokens per model, e.g. \"prices\": {%q: {\"input\": 0.15, \"output\": 0.6}}.\n", check.ConfigName, r.firstModel())
	case len(r.Unpriced) > 0:
		fmt.Fprintf(w, "\n* Unpriced (not in COST; add them to \"prices\" in %s):\n", check.ConfigName)
		for _, u := range r.Unpriced {
			fmt.Fprintf(w, "  %s: %s tokens, %s\n", u.Model, result.Thousands(u.Tokens), u.Reason)
		}
	}
	return nil
}

func (r *Report) firstModel() string {
	if len(r.Unpriced) > 0 {
		return r.Unpriced[0].Model
	}
	return "MODEL"
}
