package snapshot

import (
	"bytes"
	"strings"
	"testing"
)

// writeCanonicalAgrees checks that WriteCanonical, cut into pieces of
// chunk bytes, writes exactly Canonical's bytes, and CanonicalSHA256
// hashes them.
func writeCanonicalAgrees(t *testing.T, v any, chunk int) {
	t.Helper()
	want, err := Canonical(v)
	if err != nil {
		if werr := WriteCanonical(&bytes.Buffer{}, v); werr == nil {
			t.Fatalf("Canonical fails (%v), WriteCanonical does not", err)
		}
		return
	}
	old := canonicalChunk
	canonicalChunk = chunk
	defer func() { canonicalChunk = old }()
	var got bytes.Buffer
	if err := WriteCanonical(&got, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("chunk %d: WriteCanonical wrote\n%s\nCanonical gives\n%s", chunk, got.Bytes(), want)
	}
	if h, err := CanonicalSHA256(v); err != nil || h != SHA256Prefixed(want) {
		t.Fatalf("CanonicalSHA256 = %s, %v; want %s", h, err, SHA256Prefixed(want))
	}
}

func TestWriteCanonicalMatchesCanonical(t *testing.T) {
	docs := []string{`{}`, `[]`, `"x"`, `1e21`, `{"b":[1,2,{"z":null,"a":"\u00e9\n"}],"a":{"c":[[],[{}]]}}`,
		`{"snapshots":[` + strings.Repeat(`{"id":"abc","hash":"sha256:00"},`, 300) + `{"id":"x"}],"version":"1.1.0"}`}
	for _, d := range docs {
		v, err := Decode([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{1, 7, 64, 1 << 16} {
			writeCanonicalAgrees(t, v, chunk)
		}
	}
}

func FuzzWriteCanonical(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",{"b":null}],"c":"\u0001"}`), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		writeCanonicalAgrees(t, v, int(chunk)+1)
	})
}

// TestCanonicalSortsManyAndNonASCIIKeys: objects with more keys than the
// stack array holds, and keys whose UTF-16 order differs from their byte
// order, come out as the JCS library writes them.
func TestCanonicalSortsManyAndNonASCIIKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"\uFFFD":1,"😀":2,"é":3,"e":4`)
	for i := 0; i < 30; i++ {
		b.WriteString(`,"k` + strings.Repeat("z", i%7) + string(rune('a'+i%26)) + `":` + string(rune('0'+i%10)))
	}
	b.WriteString(`}`)
	for _, d := range []string{b.String(), `{"b":1,"a":{"😀":1,"\uFFFD":2}}`} {
		v, err := Decode([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := libraryCanonical(t, v); !bytes.Equal(got, want) {
			t.Fatalf("Canonical\n%s\njcs.Transform\n%s", got, want)
		}
	}
}
