package schema

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// schemaPatterns are the patterns of the embedded schemas.
func schemaPatterns(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"snapshot-file.schema.json", "manifest.schema.json"} {
		b, err := Source(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"pattern":\s*"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(b), -1) {
			out = append(out, strings.ReplaceAll(m[1], `\\`, `\`))
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d schema patterns", len(out))
	}
	return out
}

// TestRunMatcherIsRegexp: wherever compileRuns builds a matcher, it answers
// as regexp does, on strings built from the pattern's own characters, edge
// lengths, invalid UTF-8 and random bytes; patterns a greedy walk could get
// wrong get none.
func TestRunMatcherIsRegexp(t *testing.T) {
	pats := append(schemaPatterns(t),
		`^[0-9]+\.[0-9]+\.[0-9]+$`, `^[a-z0-9][a-z0-9._-]{0,63}$`, `^/[!-~]+$`, `^a?b*c+d{2,3}e{0,}$`, `^[^/:]+:x$`, `^é+[ü-ÿ]?$`,
		`^[a-z]+[a-c]$`, `^a*a$`, `^(ab)+$`, `^x|y$`, `(?i)^abc$`, `abc`, `^abc`, `^a+?$`, `^[a-z]*[0-9]?[a-z]$`)
	compiled := 0
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range pats {
		re := regexp.MustCompile(p)
		m := compileRuns(p)
		if m == nil {
			continue
		}
		compiled++
		alphabet := []rune(strings.Map(func(c rune) rune {
			if strings.ContainsRune(`^$[]{}()\+*?`, c) {
				return -1
			}
			return c
		}, p) + "0123456789abcdefz.-_:/Zé\xff\u00fc")
		for i := 0; i < 5000; i++ {
			var b strings.Builder
			n := r.IntN(80)
			for j := 0; j < n; j++ {
				if r.IntN(50) == 0 {
					b.WriteByte(byte(r.IntN(256)))
				} else {
					b.WriteRune(alphabet[r.IntN(len(alphabet))])
				}
			}
			s := b.String()
			if got, want := m.match(s), re.MatchString(s); got != want {
				t.Fatalf("pattern %q on %q: matcher %v, regexp %v", p, s, got, want)
			}
		}
		for _, s := range []string{"", "1.2.3", "0123456789ab", "sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("a", 65),
			"2026-01-02T03:04:05Z", "openai/0123456789ab.json", "a" + strings.Repeat("b", 63), "a" + strings.Repeat("b", 64), "/v1/x", "abccdd", "abcdd", "abcddd"} {
			if got, want := m.match(s), re.MatchString(s); got != want {
				t.Errorf("pattern %q on %q: matcher %v, regexp %v", p, s, got, want)
			}
		}
	}
	for _, p := range []string{`^[a-z]+[a-c]$`, `^a*a$`, `^(ab)+$`, `^x|y$`, `(?i)^abc$`, `abc`, `^abc`, `^a+?$`, `^[a-z]*[0-9]?[a-z]$`} {
		if compileRuns(p) != nil {
			t.Errorf("compileRuns(%q) built a matcher", p)
		}
	}
	if compiled < 8 {
		t.Errorf("only %d patterns got a matcher", compiled)
	}
}
