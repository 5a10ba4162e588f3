package schema

import (
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode/utf8"
)

// The patterns of traceforge's schemas are mostly anchored runs of
// character classes (ids, hashes, versions, timestamps): regexp's
// MatchString was a third of accepts' time on a snapshot file. For such a
// pattern accepts uses a matcher that walks the string once, built from
// the pattern's own syntax tree; any other pattern (alternations, groups,
// case folding, classes a greedy walk could get wrong) keeps regexp.

// runMatcher matches a whole string against a sequence of runs.
type runMatcher []run

// run is one element of the pattern: between min and max (-1: no limit)
// runes of a class (ranges as syntax.Regexp.Rune holds them, pairs lo-hi).
type run struct {
	ranges   []rune
	min, max int
}

func (r *run) has(c rune) bool {
	for i := 0; i+1 < len(r.ranges); i += 2 {
		if c >= r.ranges[i] && c <= r.ranges[i+1] {
			return true
		}
	}
	return false
}

// match reports whether s is matched by the runs, taken greedily (which
// compileRuns made exact: no run's class overlaps what may follow it).
// Invalid UTF-8 reads as U+FFFD one byte wide, as regexp reads it.
func (m runMatcher) match(s string) bool {
	i := 0
	for k := range m {
		r := &m[k]
		n := 0
		for r.max < 0 || n < r.max {
			if i >= len(s) {
				break
			}
			c, w := rune(s[i]), 1
			if c >= utf8.RuneSelf {
				c, w = utf8.DecodeRuneInString(s[i:])
			}
			if !r.has(c) {
				break
			}
			i += w
			n++
		}
		if n < r.min {
			return false
		}
	}
	return i == len(s)
}

// compileRuns returns the matcher of an expression that is ^, runs of
// literals or character classes (each once, ?, *, + or {m,n}), and $; nil
// for any other, or when a run that may vary in length has a class
// overlapping a class that may come right after it (a greedy walk could
// then take too much).
func compileRuns(expr string) runMatcher {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil
	}
	subs := re.Sub
	if subs[0].Op != syntax.OpBeginText || subs[len(subs)-1].Op != syntax.OpEndText {
		return nil
	}
	var m runMatcher
	for _, sub := range subs[1 : len(subs)-1] {
		if sub.Flags&syntax.FoldCase != 0 {
			return nil
		}
		switch sub.Op {
		case syntax.OpLiteral:
			for _, c := range sub.Rune {
				m = append(m, run{ranges: []rune{c, c}, min: 1, max: 1})
			}
			continue
		case syntax.OpCharClass:
			m = append(m, run{ranges: sub.Rune, min: 1, max: 1})
			continue
		}
		min, max := 0, 0
		switch sub.Op {
		case syntax.OpStar:
			min, max = 0, -1
		case syntax.OpPlus:
			min, max = 1, -1
		case syntax.OpQuest:
			min, max = 0, 1
		case syntax.OpRepeat:
			min, max = sub.Min, sub.Max
		default:
			return nil
		}
		if len(sub.Sub) != 1 || sub.Flags&syntax.NonGreedy != 0 {
			return nil
		}
		x := sub.Sub[0]
		if x.Flags&syntax.FoldCase != 0 {
			return nil
		}
		switch {
		case x.Op == syntax.OpCharClass:
			m = append(m, run{ranges: x.Rune, min: min, max: max})
		case x.Op == syntax.OpLiteral && len(x.Rune) == 1:
			m = append(m, run{ranges: []rune{x.Rune[0], x.Rune[0]}, min: min, max: max})
		default:
			return nil
		}
	}
	for i := range m {
		if m[i].min == m[i].max {
			continue
		}
		// Every class that may follow run i: up to the first run that must
		// take at least one rune.
		for j := i + 1; j < len(m); j++ {
			if overlap(m[i].ranges, m[j].ranges) {
				return nil
			}
			if m[j].min > 0 {
				break
			}
		}
	}
	return m
}

func overlap(a, b []rune) bool {
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}

// runMatchers holds the matcher of each compiled schema pattern (nil: none,
// regexp is used).
var runMatchers sync.Map // *regexp.Regexp → runMatcher

// matchPattern is re.MatchString(s), through the pattern's runMatcher when
// it has one.
func matchPattern(re *regexp.Regexp, s string) bool {
	v, ok := runMatchers.Load(re)
	if !ok {
		v, _ = runMatchers.LoadOrStore(re, compileRuns(re.String()))
	}
	if m := v.(runMatcher); m != nil {
		return m.match(s)
	}
	return re.MatchString(s)
}
