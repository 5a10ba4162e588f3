package snapshot

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/gowebpki/jcs"
)

// SameJSON reports whether a and b hold the same JSON value: objects with
// the same members, arrays with the same elements in order, equal strings,
// booleans and nulls, and numbers whose canonical text (RFC 8785) is the
// same, whatever their Go type (json.Number, int, int64, float64). A
// writer uses it to know that the file it decoded back holds exactly the
// values it encoded, so that what it computed from them (the request key,
// the record hash) holds for the file too. Values of other types are
// never the same.
func SameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
			return true // the same map (record checks the document it built)
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !SameJSON(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !SameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	an, ok := canonicalNumber(a)
	if !ok {
		return false
	}
	bn, ok := canonicalNumber(b)
	return ok && an == bn
}

// canonicalNumber is the RFC 8785 text of a number value.
func canonicalNumber(v any) (string, bool) {
	var s string
	var err error
	switch x := v.(type) {
	case json.Number:
		s, err = numberText(x)
	case int64:
		if x > maxSafeInteger || x < -maxSafeInteger {
			return "", false
		}
		s = strconv.FormatInt(x, 10)
	case int:
		return canonicalNumber(int64(x))
	case float64:
		s, err = jcs.NumberToJSON(x)
	default:
		return "", false
	}
	return s, err == nil
}
