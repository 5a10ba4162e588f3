package defaults

import (
	"fmt"
	"regexp"
	"strings"
)

// Glob is a compiled model (or endpoint) glob (DESIGN §13.2): "*" matches
// any run of characters, "/" included ("meta-llama/*", "*"); "?" matches
// one character; "[…]" is a character class as in path.Match ("[!…]" or
// "[^…]" negates it); "\" quotes the next character. Everything else
// matches itself. The whole name must match.
type Glob struct {
	Pattern string
	re      *regexp.Regexp
}

// CompileGlob compiles pattern; a malformed class or a trailing "\" is an
// error.
func CompileGlob(pattern string) (*Glob, error) {
	var b strings.Builder
	b.WriteString(`\A(?s:`)
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(pattern) {
				return nil, fmt.Errorf("bad glob %q: it ends in an unfinished \\", pattern)
			}
			i++
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		case '[':
			end := classEnd(pattern, i)
			if end < 0 {
				return nil, fmt.Errorf("bad glob %q: unclosed [", pattern)
			}
			class := pattern[i+1 : end]
			b.WriteByte('[')
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				b.WriteByte('^')
				class = class[1:]
			}
			if class == "" {
				return nil, fmt.Errorf("bad glob %q: empty character class", pattern)
			}
			for j := 0; j < len(class); j++ {
				switch class[j] {
				case '\\':
					j++
					if j < len(class) {
						b.WriteString(regexp.QuoteMeta(class[j : j+1]))
					}
				case '-':
					b.WriteByte('-')
				default:
					b.WriteString(regexp.QuoteMeta(class[j : j+1]))
				}
			}
			b.WriteByte(']')
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString(`)\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("bad glob %q: %v", pattern, err)
	}
	return &Glob{Pattern: pattern, re: re}, nil
}

// classEnd returns the index of the "]" closing the class opened at i, or -1.
func classEnd(p string, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return -1
}

// Match reports whether name matches the glob. A nil Glob matches
// everything.
func (g *Glob) Match(name string) bool {
	if g == nil {
		return true
	}
	return g.re.MatchString(name)
}

// MatchGlob compiles pattern and matches name against it; a malformed
// pattern matches nothing.
func MatchGlob(pattern, name string) bool {
	g, err := CompileGlob(pattern)
	return err == nil && g.Match(name)
}
