package change

import (
	"regexp"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Op is what a Span of a text diff does.
type Op string

// Span operations.
const (
	Equal  Op = "="
	Delete Op = "-"
	Insert Op = "+"
)

// Span is one run of a text diff: Equal text is in both texts, Delete only in
// the old one, Insert only in the new one.
type Span struct {
	Op   Op     `json:"op"`
	Text string `json:"text"`
}

// token is a word (letters, digits, underscore), a whitespace run, or one
// other character.
var token = regexp.MustCompile(`[\p{L}\p{N}_]+|\s+|.`)

// maxTokens bounds the distinct tokens a diff maps to runes; above it the
// texts are shown as one replacement.
const maxTokens = 1 << 20

// Words diffs two texts word by word (go-diff over word tokens): the spans
// of old are the Equal and Delete ones, the spans of new the Equal and Insert
// ones. Short equal runs between two edits are folded into the edit, so the
// result reads as whole phrases.
func Words(old, new string) []Span {
	if old == new {
		if old == "" {
			return nil
		}
		return []Span{{Equal, old}}
	}
	ta, tb := token.FindAllString(old, -1), token.FindAllString(new, -1)
	index := map[string]rune{}
	var texts []string
	encode := func(toks []string) []rune {
		out := make([]rune, len(toks))
		for i, t := range toks {
			r, ok := index[t]
			if !ok {
				r = tokenRune(len(texts))
				index[t] = r
				texts = append(texts, t)
			}
			out[i] = r
		}
		return out
	}
	ra, rb := encode(ta), encode(tb)
	if len(texts) > maxTokens {
		return []Span{{Delete, old}, {Insert, new}}
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 2 * time.Second
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(ra, rb, false))
	var out []Span
	for _, d := range diffs {
		var b []byte
		for _, r := range d.Text {
			b = append(b, texts[runeToken(r)]...)
		}
		out = appendSpan(out, Span{opOf(d.Type), string(b)})
	}
	return out
}

// Lines diffs two texts line by line; every span holds whole lines, each
// with its line feed (the last line of a text may lack one).
func Lines(old, new string) []Span {
	if old == new {
		if old == "" {
			return nil
		}
		return []Span{{Equal, old}}
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 2 * time.Second
	ra, rb, lines := dmp.DiffLinesToRunes(old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
	var out []Span
	for _, d := range diffs {
		out = appendSpan(out, Span{opOf(d.Type), d.Text})
	}
	return out
}

// tokenRune maps a token number to a rune outside the surrogate range (a
// surrogate would not survive go-diff's string conversions).
func tokenRune(i int) rune {
	r := rune(i) + 1
	if r >= 0xD800 {
		r += 0x800
	}
	return r
}

func runeToken(r rune) int {
	if r >= 0xD800+0x800 {
		r -= 0x800
	}
	return int(r) - 1
}

func opOf(t diffmatchpatch.Operation) Op {
	switch t {
	case diffmatchpatch.DiffDelete:
		return Delete
	case diffmatchpatch.DiffInsert:
		return Insert
	}
	return Equal
}

func appendSpan(out []Span, s Span) []Span {
	if s.Text == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Op == s.Op {
		out[n-1].Text += s.Text
		return out
	}
	return append(out, s)
}

// Side returns the text of one side of a diff: old (Equal + Delete) when
// new is false, else new (Equal + Insert).
func Side(spans []Span, new bool) string {
	var b []byte
	for _, s := range spans {
		if s.Op == Equal || (s.Op == Delete) != new {
			b = append(b, s.Text...)
		}
	}
	return string(b)
}
