package snapshot

import (
	"strings"
	"testing"
)

// BenchmarkPlainEnd: the escape scan over ~3 KB of plain text (a request's
// messages), as bytes (the decoder) and as a string (the canonical writer).
func BenchmarkPlainEnd(b *testing.B) {
	s := strings.Repeat("You are a careful assistant for an operations team. ", 60)
	bs := []byte(s)
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(bs)))
		for b.Loop() {
			if plainEnd(bs, 0) != len(bs) {
				b.Fatal("stopped early")
			}
		}
	})
	b.Run("string-ascii", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if plainASCIIEnd(s, 0) != len(s) {
				b.Fatal("stopped early")
			}
		}
	})
}
