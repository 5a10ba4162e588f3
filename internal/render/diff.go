package render

import (
	"fmt"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
)

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

type diffLine struct {
	op   change.Op
	text string
}

// lineDiff diffs a and b line by line (change.Lines, the one line diff).
func lineDiff(a, b string) []diffLine {
	var out []diffLine
	for _, s := range change.Lines(a, b) {
		text := strings.TrimSuffix(s.Text, "\n")
		for _, l := range strings.Split(text, "\n") {
			out = append(out, diffLine{s.Op, l})
		}
	}
	return out
}

// UnifiedDiff returns a unified diff (---/+++ headers, @@ hunks with three
// lines of context) from a to b, or "" when they are equal.
func UnifiedDiff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	lines := lineDiff(ensureNL(a), ensureNL(b))
	var changed []int
	for i, l := range lines {
		if l.op != change.Equal {
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	// Line numbers (1-based) in a and b at the start of each diff line.
	aAt, bAt := make([]int, len(lines)+1), make([]int, len(lines)+1)
	an, bn := 1, 1
	for i, l := range lines {
		aAt[i], bAt[i] = an, bn
		if l.op != change.Insert {
			an++
		}
		if l.op != change.Delete {
			bn++
		}
	}
	aAt[len(lines)], bAt[len(lines)] = an, bn
	for k := 0; k < len(changed); {
		start := max(changed[k]-diffContext, 0)
		end := changed[k]
		for k < len(changed) && changed[k] <= end+2*diffContext {
			end = changed[k]
			k++
		}
		end = min(end+diffContext, len(lines)-1)
		aCount, bCount := 0, 0
		for i := start; i <= end; i++ {
			if lines[i].op != change.Insert {
				aCount++
			}
			if lines[i].op != change.Delete {
				bCount++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aAt[start], aCount), hunkRange(bAt[start], bCount))
		for i := start; i <= end; i++ {
			switch lines[i].op {
			case change.Delete:
				out.WriteByte('-')
			case change.Insert:
				out.WriteByte('+')
			default:
				out.WriteByte(' ')
			}
			out.WriteString(lines[i].text)
			out.WriteByte('\n')
		}
	}
	return out.String()
}

func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

func ensureNL(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
