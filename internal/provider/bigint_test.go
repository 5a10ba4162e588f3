package provider_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestMaskInexactNumbers(t *testing.T) {
	cases := []struct {
		in, want string
		n        int
	}{
		{`{"seed":17212412409712741000}`, `{"seed":0}`, 1},
		{`{"seed":9007199254740992}`, `{"seed":9007199254740992}`, 0}, // 2^53 itself is exact
		{`{"seed":9007199254740993,"n":-9007199254740993}`, `{"seed":0,"n":0}`, 2},
		{`{"f":1.7212412409712741e19,"g":1e21,"h":0.5}`, `{"f":0,"g":1e21,"h":0.5}`, 1},
		{`{"s":"17212412409712741000","k\"17212412409712741000":[1,18446744073709551616]}`, `{"s":"17212412409712741000","k\"17212412409712741000":[1,0]}`, 1},
		{`{"x":123456789012345678901234567890}`, `{"x":0}`, 1},
	}
	for _, c := range cases {
		got, n := provider.MaskInexactNumbers([]byte(c.in))
		if string(got) != c.want || n != c.n {
			t.Errorf("%s: %s (%d), want %s (%d)", c.in, got, n, c.want, c.n)
		}
	}
}

func TestDecodeBeyondJCS(t *testing.T) {
	m, ok := provider.DecodeBeyondJCS([]byte(`{"choices":[{"seed":17212412409712741000,"message":{"content":"Paris."}}],"usage":{"total_tokens":45}}`))
	if !ok {
		t.Fatal("refused")
	}
	seed := m["choices"].([]any)[0].(map[string]any)["seed"]
	if seed != json.Number("17212412409712741000") {
		t.Fatalf("seed %#v", seed)
	}
	if n, ok := provider.AsInt(m["usage"].(map[string]any)["total_tokens"]); !ok || n != 45 {
		t.Fatalf("total_tokens %v", n)
	}
	for _, bad := range []string{
		`{"content":"Paris."}`,                        // nothing inexact: Decode reads it
		`{"a":1,"a":17212412409712741000}`,            // a duplicate key stays refused
		`[17212412409712741000]`,                      // not an object
		"{\"s\":\"\xff\",\"n\":17212412409712741000}", // invalid UTF-8
		`{"n":17212412409712741000} {}`,               // trailing data
		`{"n":00017212412409712741000}`,               // not JSON
	} {
		if _, ok := provider.DecodeBeyondJCS([]byte(bad)); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzDecodeBeyondJCS: never panics; what it accepts Decode refuses and
// Decode accepts once the inexact numbers are masked; a text without
// inexact numbers is left as it is.
func FuzzDecodeBeyondJCS(f *testing.F) {
	f.Add([]byte(`{"choices":[{"seed":17212412409712741000}],"usage":{"total_tokens":45}}`))
	f.Add([]byte(`{"s":"\"9007199254740993","n":[-9007199254740993,1.5e19,"x"]}`))
	f.Add([]byte(`{"n":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		masked, n := provider.MaskInexactNumbers(data)
		if n == 0 && !bytes.Equal(masked, data) {
			t.Fatalf("nothing masked but the text changed: %q → %q", data, masked)
		}
		m, ok := provider.DecodeBeyondJCS(data)
		if !ok {
			return
		}
		if m == nil || n == 0 {
			t.Fatalf("accepted %q without an inexact number", data)
		}
		if _, err := snapshot.Decode(data); err == nil {
			t.Fatalf("accepted %q, which Decode reads", data)
		}
		if _, err := snapshot.Decode(masked); err != nil {
			t.Fatalf("accepted %q, whose masked text Decode refuses: %v", data, err)
		}
	})
}
