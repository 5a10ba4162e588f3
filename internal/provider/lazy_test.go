package provider_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// TestDataPiecesSameBytesAsWholeEvents: the template path writes exactly
// what encoding each event whole writes, for strings that need escaping.
func TestDataPiecesSameBytesAsWholeEvents(t *testing.T) {
	s := "plain <b>&amp;</b> \"quoted\" back\\slash\ttab\nnew line \u2028 sep \x01 ctl \xff bad utf-8 " +
		strings.Repeat("☕ word ", 20) + "\u0000 nul, and the hole's own text traceforge-piece"
	v := func(p string) any {
		return provider.Ordered("id", "x<y>\u0000traceforge-piece\u0000", "delta", provider.Ordered("content", p), "usage", nil)
	}
	var got bytes.Buffer
	if err := provider.EmitterFor(&got).NamedPieces("content_block_delta", s, provider.TextPiece, v); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for p := range provider.EachPiece(s, provider.TextPiece) {
		ev, err := provider.NamedEvent("content_block_delta", v(p))
		if err != nil {
			t.Fatal(err)
		}
		want.Write(ev)
	}
	if got.String() != want.String() {
		t.Fatalf("template events differ:\ngot  %q\nwant %q", got.String(), want.String())
	}
}

// TestEachPieceLinear: the splitter looks only at the next window, so a
// string of a million pieces is cut in one pass (the old splitter counted
// the runes of the whole remaining string per piece: about 10^12 steps
// here), and the pieces are those of Pieces.
func TestEachPieceLinear(t *testing.T) {
	s := strings.Repeat("abcdefghijklmnop", 1<<20) // 16 MiB, no whitespace
	pieces := provider.Pieces(s, provider.TextPiece)
	n, total := len(pieces), 0
	for _, p := range pieces {
		total += len(p)
	}
	if total != len(s) || n != 1<<20 {
		t.Fatalf("%d pieces, %d bytes", n, total)
	}
	short := "ab cd ef gh ij kl mn op qr st uv wx yz " + strings.Repeat("é", 40)
	if !slices.Equal(slices.Collect(provider.EachPiece(short, 5)), provider.Pieces(short, 5)) {
		t.Fatal("EachPiece and Pieces differ")
	}
}
