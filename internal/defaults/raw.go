package defaults

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// EditRaw returns the request body raw (a JSON object, already decoded
// strictly once) with each pointer set to its value: what record sends
// upstream. Every byte the application sent is kept; a missing member is
// appended after the last member of its object (missing parent objects are
// written whole), an explicit null is replaced. Values are written as JCS
// writes them. A pointer whose place holds a non-null value or crosses a
// non-object is an error (Apply never reports such a pointer).
func EditRaw(raw []byte, pointers []string, values []any) ([]byte, error) {
	if len(pointers) != len(values) {
		return nil, errors.New("defaults: pointers and values differ in length")
	}
	out := raw
	for i, p := range pointers {
		toks, err := parsePointer(p)
		if err != nil {
			return nil, err
		}
		if out, err = editOne(out, toks, values[i]); err != nil {
			return nil, fmt.Errorf("defaults: %s: %w", p, err)
		}
	}
	return out, nil
}

func editOne(b []byte, toks []string, value any) ([]byte, error) {
	obj := skipWS(b, 0)
	if obj >= len(b) || b[obj] != '{' {
		return nil, errors.New("the body is not a JSON object")
	}
	for i, t := range toks {
		m, err := findMember(b, obj, t)
		if err != nil {
			return nil, err
		}
		rest := toks[i+1:]
		if !m.found {
			text, err := memberText(t, rest, value)
			if err != nil {
				return nil, err
			}
			at := obj + 1
			if m.lastEnd > 0 {
				at = m.lastEnd
				text = append([]byte{','}, text...)
			}
			return splice(b, at, at, text), nil
		}
		v := b[m.valStart:m.valEnd]
		switch {
		case string(v) == "null":
			text, err := valueText(rest, value)
			if err != nil {
				return nil, err
			}
			return splice(b, m.valStart, m.valEnd, text), nil
		case len(rest) > 0 && v[0] == '{':
			obj = m.valStart
		default:
			return nil, errors.New("the member is present")
		}
	}
	return nil, errors.New("unreachable")
}

func splice(b []byte, from, to int, text []byte) []byte {
	out := make([]byte, 0, len(b)-(to-from)+len(text))
	out = append(out, b[:from]...)
	out = append(out, text...)
	return append(out, b[to:]...)
}

// memberText is `"name":VALUE` where VALUE nests rest around value.
func memberText(name string, rest []string, value any) ([]byte, error) {
	out, err := snapshot.AppendCanonicalString(nil, name)
	if err != nil {
		return nil, err
	}
	v, err := valueText(rest, value)
	if err != nil {
		return nil, err
	}
	return append(append(out, ':'), v...), nil
}

func valueText(rest []string, value any) ([]byte, error) {
	if len(rest) == 0 {
		return snapshot.Canonical(value)
	}
	inner, err := memberText(rest[0], rest[1:], value)
	if err != nil {
		return nil, err
	}
	return append(append([]byte{'{'}, inner...), '}'), nil
}

// member is where a member of an object is, or where to add one.
type member struct {
	found            bool
	valStart, valEnd int
	lastEnd          int // end of the object's last value; 0 when it has none
}

// findMember looks for name among the members of the object at obj.
func findMember(b []byte, obj int, name string) (member, error) {
	var m member
	i := skipWS(b, obj+1)
	if i < len(b) && b[i] == '}' {
		return m, nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return m, errors.New("malformed JSON object")
		}
		ks := i
		ke, err := skipString(b, i)
		if err != nil {
			return m, err
		}
		key, err := keyOf(b[ks:ke])
		if err != nil {
			return m, err
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return m, errors.New("malformed JSON object")
		}
		vs := skipWS(b, i+1)
		ve, err := skipValue(b, vs)
		if err != nil {
			return m, err
		}
		if key == name {
			return member{found: true, valStart: vs, valEnd: ve}, nil
		}
		m.lastEnd = ve
		i = skipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return m, nil
		}
		return m, errors.New("malformed JSON object")
	}
	return m, errors.New("unterminated JSON object")
}

func keyOf(quoted []byte) (string, error) {
	if !slices.Contains(quoted, '\\') {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	err := json.Unmarshal(quoted, &s)
	return s, err
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated JSON string")
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("missing JSON value")
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated JSON value")
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		if j == i {
			return 0, errors.New("missing JSON value")
		}
		return j, nil
	}
}
