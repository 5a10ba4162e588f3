package snapshot

import (
	"encoding/json"
	"strings"
	"testing"
)

// RecordHash and FileHash write their canonical bytes directly; they equal
// the hash of the canonical JSON of the object they stand for: the record
// copied without "hash", and {"version", "snapshots": [hashes]}.
func TestDirectHashesMatchCanonical(t *testing.T) {
	recs := []map[string]any{
		{},
		{"hash": "sha256:x"},
		{"id": "0123456789ab", "hash": "sha256:old", "request": map[string]any{"model": "m", "n": json.Number("1.50"), "é": []any{"a", nil, true}}},
		{"ключ": "v", "a": "\u2028", "z": map[string]any{"\U0001F600": 1, "\uFB33": 2}, "hash": 3},
	}
	for i := 0; i < 20; i++ { // more members than the stack array holds
		recs[2][strings.Repeat("k", i+1)] = i
	}
	for _, rec := range recs {
		c := map[string]any{}
		for k, v := range rec {
			if k != "hash" {
				c[k] = v
			}
		}
		want, err := CanonicalSHA256(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := RecordHash(rec); err != nil || got != want {
			t.Errorf("RecordHash(%v) = %s, %v; want %s", rec, got, err, want)
		}
	}
	if _, err := RecordHash(map[string]any{"a": string([]byte{0xff})}); err == nil {
		t.Error("RecordHash accepted invalid UTF-8")
	}
	if _, err := RecordHash(map[string]any{string([]byte{0xff}): 1}); err == nil {
		t.Error("RecordHash accepted an invalid UTF-8 key")
	}
	for _, hs := range [][]string{nil, {"sha256:a"}, {"sha256:a", "sha256:\"b\\"}} {
		for _, v := range []string{"1.1.0", "ü"} {
			l := make([]any, len(hs))
			for i, h := range hs {
				l[i] = h
			}
			want, _ := CanonicalSHA256(map[string]any{"version": v, "snapshots": l})
			if got, err := FileHash(v, hs); err != nil || got != want {
				t.Errorf("FileHash(%q, %q) = %s, %v; want %s", v, hs, got, err, want)
			}
		}
	}
	if _, err := FileHash(string([]byte{0xff}), nil); err == nil {
		t.Error("FileHash accepted an invalid UTF-8 version")
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{"0123456789ab": true, "abcdefabcdef": true, "0123456789aB": false, "0123456789a": false,
		"0123456789abc": false, "0123456789ag": false, "012345678/ab": false, "": false, "0123456789a\n": false} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v", id, got)
		}
	}
}
