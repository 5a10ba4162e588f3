package provider

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// maxExactInteger is 2^53: JCS (RFC 8785) writes numbers as IEEE doubles,
// which hold integers exactly only up to it.
const maxExactInteger = 1 << 53

// DecodeBeyondJCS decodes a plain answer that snapshot.Decode refuses only
// for numbers JCS cannot hold exactly — integers beyond 2^53 (a 64-bit
// seed or id from Together or the Hugging Face router, DESIGN §13.3), or
// numbers written otherwise that are such integers. Everything else must be
// what Decode accepts (valid UTF-8, no duplicate keys, one object, …). The
// value has every number as a json.Number of its text, so the derived
// fields can be read; ok is false when data has no such number or is not
// acceptable for another reason. Record keeps such an answer as text
// (response.wire) and replay sends that text byte for byte.
func DecodeBeyondJCS(data []byte) (map[string]any, bool) {
	masked, n := MaskInexactNumbers(data)
	if n == 0 {
		return nil, false
	}
	v, err := snapshot.Decode(masked)
	if err != nil {
		return nil, false
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// MaskInexactNumbers returns data with every number literal outside
// strings that JCS cannot hold exactly replaced by 0, and how many it
// replaced. It does not check that data is JSON: a string left open runs
// to the end. data is not modified.
func MaskInexactNumbers(data []byte) ([]byte, int) {
	var out []byte
	n, last := 0, 0
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			i = skipString(data, i)
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			isInt := true
			for j < len(data) {
				d := data[j]
				if d == '.' || d == 'e' || d == 'E' {
					isInt = false
				} else if !(d == '-' || d == '+' || (d >= '0' && d <= '9')) {
					break
				}
				j++
			}
			if inexactNumber(string(data[i:j]), isInt) {
				if out == nil {
					out = make([]byte, 0, len(data))
				}
				out = append(out, data[last:i]...)
				out = append(out, '0')
				last = j
				n++
			}
			i = j
		default:
			i++
		}
	}
	if n == 0 {
		return data, 0
	}
	return append(out, data[last:]...), n
}

// inexactNumber reports whether the literal text is a number JCS cannot
// hold exactly (snapshot.Decode's limit): an integer beyond 2^53, or a
// number with a fraction or exponent whose value is such an integer.
func inexactNumber(text string, isInt bool) bool {
	if isInt {
		digits := text
		if len(digits) > 0 && digits[0] == '-' {
			digits = digits[1:]
		}
		if digits == "" {
			return false
		}
		u, err := strconv.ParseUint(digits, 10, 64)
		return err != nil || u > maxExactInteger
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return false
	}
	a := math.Abs(f)
	return a > maxExactInteger && a < 1e21
}
