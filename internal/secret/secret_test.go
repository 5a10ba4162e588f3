package secret

import (
	"strings"
	"testing"
)

// foldBearerByBytes is the byte-by-byte definition containsFoldBearer must
// keep: "bearer" anywhere in s, in any ASCII case.
func foldBearerByBytes(s string) bool {
	return strings.Contains(strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		if r >= 0x80 {
			return '?' // non-ASCII never folds to ASCII here
		}
		return r
	}, s), "bearer")
}

func TestContainsFoldBearer(t *testing.T) {
	for _, s := range []string{"", "b", "bearer", "BEARER", "BeArEr", "xbeare", "bbearer", "BBEARER",
		"abbe bearr Bearer", "bear er", "bearer"[:5], "é bearer", "Bé bearer x", "bB bEaReR",
		"bearebearer", "BEAREB", "Authorization: Bearer sk-x", strings.Repeat("b", 40) + "earer",
		"\u212aearer", "ḃearer"} {
		if got, want := containsFoldBearer(s), foldBearerByBytes(s); got != want {
			t.Errorf("containsFoldBearer(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzContainsFoldBearer(f *testing.F) {
	for _, s := range []string{"bearer", "xBeArErx", "bbbBBBearer", "bea rer"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := containsFoldBearer(s), foldBearerByBytes(s); got != want {
			t.Fatalf("containsFoldBearer(%q) = %v, want %v", s, got, want)
		}
	})
}
