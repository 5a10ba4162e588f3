package snapshot

import (
	"errors"
	"testing"
)

// A duplicate key is reported at the key, before any error after it, with
// the key's pointer — whether what follows it is valid or not.
func TestDecodeDuplicateKeyFirst(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"a":2}`, `{"x":{"a":1,"a":[1,}}`, `{"a":1,"a"`, `{"a":1,"a" x}`, `{"a":1,"a":`, `{"a":1,"a":{"b":tru}}`, `[{"a":{"c":1},"a":{"c":1,"c":2}}]`,
	} {
		for _, alias := range []bool{false, true} {
			_, err := decode([]byte(in), alias)
			var de *DecodeError
			if !errors.As(err, &de) || de.Reason != `duplicate object key "a"` {
				t.Errorf("%s (alias %v): %v, want the duplicate key", in, alias, err)
				continue
			}
			if want := map[string]string{`{"x":{"a":1,"a":[1,}}`: "/x/a", `[{"a":{"c":1},"a":{"c":1,"c":2}}]`: "/0/a"}[in]; want != "" && de.Pointer != want {
				t.Errorf("%s: pointer %q, want %q", in, de.Pointer, want)
			}
		}
	}
	if _, err := Decode([]byte(`{"a":{"b":1,"c":[1,2]},"b":{"a":1},"c":[{"a":1},{"a":2}]}`)); err != nil {
		t.Errorf("no duplicate: %v", err)
	}
}
