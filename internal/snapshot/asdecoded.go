package snapshot

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AsDecoded turns doc, a document about to be written (AppendFile,
// MarshalFile), into the very value Decode returns for the written bytes,
// in place: every number becomes the json.Number of the text the encoder
// writes for it (int, int64, float64 and a json.Number that is not in its
// canonical form alike). It returns an error, naming the value's JSON
// pointer, where Decode would refuse those bytes (a string or key that is
// not valid UTF-8, an integer beyond 2^53, nesting deeper than MaxDepth) or
// the encoder cannot write the value. So a writer that checks doc after
// AsDecoded checks exactly what a reader of the file will see, without
// decoding the file back (record's write; TestAsDecodedIsDecodeOfEncode
// and FuzzAsDecoded hold the two equal). Values are changed only where
// they are numbers; on an error doc may be partly converted (still the
// same JSON values).
func AsDecoded(doc map[string]any) error {
	if _, _, err := asDecoded(doc, 0); err != nil {
		return err
	}
	return nil
}

// pathError is an AsDecoded error; the pointer is built on the way out.
type pathError struct {
	ptr    []string // innermost first
	reason string
}

func (e *pathError) Error() string {
	var b strings.Builder
	for i := len(e.ptr) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(EscapePointer(e.ptr[i]))
	}
	if b.Len() == 0 {
		return e.reason
	}
	return fmt.Sprintf("%s (at %s)", e.reason, b.String())
}

func (e *pathError) at(seg string) *pathError { e.ptr = append(e.ptr, seg); return e }

// asDecoded converts v (at nesting depth, as Decode counts it) and returns
// the value to store in its place when it differs (a number: replaced).
func asDecoded(v any, depth int) (n any, replaced bool, err *pathError) {
	switch x := v.(type) {
	case nil, bool:
		return nil, false, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, false, &pathError{reason: "string is not valid UTF-8"}
		}
		return nil, false, nil
	case map[string]any:
		if depth >= MaxDepth {
			return nil, false, &pathError{reason: fmt.Sprintf("JSON nested deeper than %d levels", MaxDepth)}
		}
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, false, (&pathError{reason: "object key is not valid UTF-8"}).at(k)
			}
			n, replaced, err := asDecoded(e, depth+1)
			if err != nil {
				return nil, false, err.at(k)
			}
			if replaced {
				x[k] = n
			}
		}
		return nil, false, nil
	case []any:
		if depth >= MaxDepth {
			return nil, false, &pathError{reason: fmt.Sprintf("JSON nested deeper than %d levels", MaxDepth)}
		}
		for i, e := range x {
			n, replaced, err := asDecoded(e, depth+1)
			if err != nil {
				return nil, false, err.at(strconv.Itoa(i))
			}
			if replaced {
				x[i] = n
			}
		}
		return nil, false, nil
	}
	text, ok, nerr := encodedNumber(v)
	if !ok {
		return nil, false, &pathError{reason: fmt.Sprintf("cannot encode %T", v)}
	}
	if nerr != nil {
		return nil, false, &pathError{reason: nerr.Error()}
	}
	if reason := numberLimit(text, !strings.ContainsAny(text, ".eE")); reason != "" {
		return nil, false, &pathError{reason: reason}
	}
	if n, same := v.(json.Number); same && string(n) == text {
		return nil, false, nil
	}
	return json.Number(text), true, nil
}
