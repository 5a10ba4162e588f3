package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

type diffLine struct {
	op   diffmatchpatch.Operation
	text string
}

// lineDiff diffs a and b line by line with go-diff.
func lineDiff(a, b string) []diffLine {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 2 * time.Second
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var out []diffLine
	for _, d := range diffs {
		text := strings.TrimSuffix(d.Text, "\n")
		for _, l := range strings.Split(text, "\n") {
			out = append(out, diffLine{d.Type, l})
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
		if l.op != diffmatchpatch.DiffEqual {
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
		if l.op != diffmatchpatch.DiffInsert {
			an++
		}
		if l.op != diffmatchpatch.DiffDelete {
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
			if lines[i].op != diffmatchpatch.DiffInsert {
				aCount++
			}
			if lines[i].op != diffmatchpatch.DiffDelete {
				bCount++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aAt[start], aCount), hunkRange(bAt[start], bCount))
		for i := start; i <= end; i++ {
			switch lines[i].op {
			case diffmatchpatch.DiffDelete:
				out.WriteByte('-')
			case diffmatchpatch.DiffInsert:
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
