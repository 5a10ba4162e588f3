package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The pretty layout snapshot and manifest files are written in
// (docs/format.md, "How files are written").

func marshalPretty(v any, kind objectKind) ([]byte, error) {
	return appendPretty(make([]byte, 0, 8<<10), v, kind) // a typical snapshot file in one allocation
}

func appendPretty(dst []byte, v any, kind objectKind) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	if err := writeValue(b, v, kind, 0, true); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// indentText is a newline and the indentation of the deepest levels
// written in one piece.
const indentText = "\n                                                                "

func indent(b *bytes.Buffer, n int) {
	if 1+2*n <= len(indentText) {
		b.WriteString(indentText[:1+2*n])
		return
	}
	b.WriteString(indentText)
	for i := (len(indentText) - 1) / 2; i < n; i++ {
		b.WriteString("  ")
	}
}

// writeValue writes v; kind applies to v when v is an object, or to the
// elements of v when v is an array of objects.
func writeValue(b *bytes.Buffer, v any, kind objectKind, depth int, _ bool) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, x)
	case json.Number, float64, int, int64:
		s, _, err := encodedNumber(x)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if kind == kindWireEvent {
				// A stream's events, one per line, indented by one
				// level whatever their depth: hundreds of them keep the
				// file within the size budget of DESIGN §13.4.
				indent(b, 1)
			} else {
				indent(b, depth+1)
			}
			if err := writeValue(b, e, kind, depth+1, false); err != nil {
				return err
			}
		}
		indent(b, depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		if kind == kindWireEvent {
			// A stream's event is one line (see the array case).
			return writeOneLine(b, x, kind)
		}
		b.WriteByte('{')
		var small [16]string // most objects: the keys stay on the stack
		for i, k := range orderedKeys(small[:0], x, kind) {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(b, depth+1)
			writeString(b, k)
			b.WriteString(": ")
			if err := writeValue(b, x[k], childKind(kind, k), depth+1, false); err != nil {
				return err
			}
		}
		indent(b, depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot encode %T", v)
	}
	return nil
}

// writeOneLine writes v on one line: members separated by ", ", nested
// objects and arrays the same way.
func writeOneLine(b *bytes.Buffer, v any, kind objectKind) error {
	switch x := v.(type) {
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeOneLine(b, e, kindOther); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		var small [8]string
		for i, k := range orderedKeys(small[:0], x, kind) {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, k)
			b.WriteString(": ")
			if err := writeOneLine(b, x[k], kindOther); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return writeValue(b, v, kindOther, 0, false)
	}
	return nil
}
