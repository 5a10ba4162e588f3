package schema

import (
	"encoding/json"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The validator (jsonschema/v5) builds, for every schema it applies to an
// object, a map of the object's member names, and a string for every
// keyword and instance location it visits, whether or not anything fails:
// ~700 allocations for one snapshot file, most of the cost of a static
// check. Nearly every file a user checks is valid, so validate first asks
// accepts, which walks the same compiled schemas without allocating and
// answers yes only when every keyword on the way holds. Anything else (a
// violation, or a keyword accepts does not evaluate) goes to the validator,
// which stays the only source of findings: accepts can make a check
// faster, never change its result.

// verdict is accepts's answer about one value: it certainly satisfies the
// schema, it certainly does not, or accepts cannot tell.
type verdict uint8

const (
	unsure verdict = iota
	yes
	no
)

// maxInPlace bounds the schemas applied in place ($ref, allOf, if, …) to one
// value, so that a reference cycle (which the validator reports as an
// infinite loop) makes accepts unsure instead of recursing forever.
const maxInPlace = 64

// accepts evaluates v against s exactly as the validator's keywords do
// (draft 2020-12 as compiled by newCompiler: formats asserted, no custom
// formats, no extensions), for the keywords traceforge's schemas use; any
// other keyword makes it unsure. Values are those Decode makes (objects,
// arrays, strings, json.Number, bools, nil); any other Go type is unsure.
func accepts(s *jsonschema.Schema, v any) verdict { return accept(s, v, 0) }

func accept(s *jsonschema.Schema, v any, inPlace int) verdict {
	if inPlace > maxInPlace || !evaluable(s) {
		return unsure
	}
	if s.Always != nil {
		if *s.Always {
			return yes
		}
		return no
	}
	vType := jsonType(v)
	if vType == "" {
		return unsure
	}
	if len(s.Types) > 0 {
		matched := false
		for _, t := range s.Types {
			if t == vType {
				matched = true
				break
			}
			if t == "integer" && vType == "number" {
				isInt, ok := integral(v.(json.Number))
				if !ok {
					return unsure
				}
				if isInt {
					matched = true
					break
				}
			}
		}
		if !matched {
			return no
		}
	}
	r := yes
	// and folds one keyword's verdict into r: any no wins, then unsure.
	and := func(k verdict) {
		if k == no || r == no {
			r = no
		} else if k == unsure {
			r = unsure
		}
	}
	if len(s.Constant) > 0 {
		and(equal(v, s.Constant[0]))
	}
	if len(s.Enum) > 0 {
		e := no
		for _, item := range s.Enum {
			if k := equal(v, item); k == yes {
				e = yes
				break
			} else if k == unsure {
				e = unsure
			}
		}
		and(e)
	}
	if s.Format != "" {
		if f := jsonschema.Formats[s.Format]; f != nil && !f(v) {
			return no
		}
	}
	switch v := v.(type) {
	case map[string]any:
		and(acceptObject(s, v))
	case []any:
		and(acceptArray(s, v))
	case string:
		if s.MinLength != -1 || s.MaxLength != -1 {
			n := utf8.RuneCountInString(v)
			if (s.MinLength != -1 && n < s.MinLength) || (s.MaxLength != -1 && n > s.MaxLength) {
				return no
			}
		}
		if s.Pattern != nil && !matchPattern(s.Pattern, v) {
			return no
		}
	case json.Number:
		and(acceptNumber(s, v))
	}
	if r == no {
		return no
	}
	if s.Ref != nil {
		and(accept(s.Ref, v, inPlace+1))
	}
	if s.Not != nil {
		switch accept(s.Not, v, inPlace+1) {
		case yes:
			and(no)
		case no:
		default:
			and(unsure)
		}
	}
	for _, sub := range s.AllOf {
		and(accept(sub, v, inPlace+1))
	}
	if len(s.AnyOf) > 0 {
		a := no
		for _, sub := range s.AnyOf {
			if k := accept(sub, v, inPlace+1); k == yes {
				a = yes
				break
			} else if k == unsure {
				a = unsure
			}
		}
		and(a)
	}
	if len(s.OneOf) > 0 {
		matched, sure := 0, true
		for _, sub := range s.OneOf {
			switch accept(sub, v, inPlace+1) {
			case yes:
				matched++
			case unsure:
				sure = false
			}
		}
		switch {
		case matched > 1:
			and(no)
		case !sure:
			and(unsure)
		case matched == 0:
			and(no)
		}
	}
	if s.If != nil {
		switch accept(s.If, v, inPlace+1) {
		case yes:
			if s.Then != nil {
				and(accept(s.Then, v, inPlace+1))
			}
		case no:
			if s.Else != nil {
				and(accept(s.Else, v, inPlace+1))
			}
		default:
			and(unsure)
		}
	}
	return r
}

// evaluable reports whether accepts evaluates every keyword s holds.
func evaluable(s *jsonschema.Schema) bool {
	return s.RecursiveRef == nil && s.DynamicRef == nil &&
		s.PropertyNames == nil && !s.RegexProperties && len(s.PatternProperties) == 0 &&
		len(s.Dependencies) == 0 && len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0 &&
		s.UnevaluatedProperties == nil && s.UnevaluatedItems == nil &&
		s.Items == nil && s.AdditionalItems == nil && s.Contains == nil &&
		s.ContentEncoding == "" && s.ContentMediaType == "" && s.ContentSchema == nil &&
		s.MultipleOf == nil && len(s.Extensions) == 0
}

func acceptObject(s *jsonschema.Schema, v map[string]any) verdict {
	if (s.MinProperties != -1 && len(v) < s.MinProperties) || (s.MaxProperties != -1 && len(v) > s.MaxProperties) {
		return no
	}
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			return no
		}
	}
	var additional *jsonschema.Schema
	switch ap := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		if !ap {
			additional = falseSchema
		}
	case *jsonschema.Schema:
		additional = ap
	default:
		return unsure
	}
	r := yes
	if additional == nil && len(s.Properties) < len(v) {
		// Only the declared members are checked: look them up (most
		// schemas applied in place, e.g. through $ref, declare none).
		for name, sub := range s.Properties {
			if pv, ok := v[name]; ok {
				if !fold(&r, accept(sub, pv, 0)) {
					return no
				}
			}
		}
		return r
	}
	for name, pv := range v {
		sub, ok := s.Properties[name]
		switch {
		case ok:
		case additional != nil:
			sub = additional
		default:
			continue
		}
		if !fold(&r, accept(sub, pv, 0)) {
			return no
		}
	}
	return r
}

// fold folds one part's verdict k into r (no, else unsure, else yes) and
// reports whether to go on: false once a part certainly fails.
func fold(r *verdict, k verdict) bool {
	switch k {
	case no:
		*r = no
		return false
	case unsure:
		*r = unsure
	}
	return true
}

// falseSchema stands for "additionalProperties": false in acceptObject.
var falseSchema = &jsonschema.Schema{Always: new(bool)}

func acceptArray(s *jsonschema.Schema, v []any) verdict {
	if (s.MinItems != -1 && len(v) < s.MinItems) || (s.MaxItems != -1 && len(v) > s.MaxItems) {
		return no
	}
	r := yes
	if s.UniqueItems {
		for i := 1; i < len(v); i++ {
			for j := 0; j < i; j++ {
				switch equal(v[i], v[j]) {
				case yes:
					return no
				case unsure:
					r = unsure
				}
			}
		}
	}
	for i, item := range v {
		var sub *jsonschema.Schema
		switch {
		case i < len(s.PrefixItems):
			sub = s.PrefixItems[i]
		case s.Items2020 != nil:
			sub = s.Items2020
		default:
			return r
		}
		if !fold(&r, accept(sub, item, 0)) {
			return no
		}
	}
	return r
}

func acceptNumber(s *jsonschema.Schema, n json.Number) verdict {
	if s.Minimum == nil && s.Maximum == nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil {
		return yes
	}
	c := number{text: string(n)}
	c.i, c.isI = plainInt(c.text)
	// fails reports whether n is on the wrong side of bound: below it
	// (below, inclusive: n < bound; exclusive: n <= bound) or above it.
	fails := func(bound *big.Rat, below, exclusive bool) verdict {
		if bound == nil {
			return no
		}
		cmp, ok := c.cmp(bound)
		if !ok {
			return unsure
		}
		if below {
			cmp = -cmp
		}
		return is(cmp > 0 || (exclusive && cmp == 0))
	}
	r := yes
	for _, k := range [4]verdict{
		fails(s.Minimum, true, false), fails(s.ExclusiveMinimum, true, true),
		fails(s.Maximum, false, false), fails(s.ExclusiveMaximum, false, true),
	} {
		switch k {
		case yes:
			return no
		case unsure:
			r = unsure
		}
	}
	return r
}

// number compares a json.Number with schema bounds as the validator does
// (exactly, as a big.Rat), through int64 when both sides are integers that
// fit.
type number struct {
	text string
	i    int64
	isI  bool
	rat  *big.Rat
}

func (c *number) cmp(b *big.Rat) (int, bool) {
	if c.isI && b.IsInt() && b.Num().IsInt64() {
		bi := b.Num().Int64()
		switch {
		case c.i < bi:
			return -1, true
		case c.i > bi:
			return 1, true
		}
		return 0, true
	}
	if c.rat == nil {
		r, ok := new(big.Rat).SetString(c.text)
		if !ok {
			return 0, false
		}
		c.rat = r
	}
	return c.rat.Cmp(b), true
}

// plainInt parses an optionally signed run of decimal digits that fits an
// int64 (what strconv.ParseInt accepts in base 10).
func plainInt(s string) (int64, bool) {
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// integral reports whether n is an integer ("1", "1.0", "1e3"), as the
// validator's "integer" type decides; ok is false when n does not parse.
func integral(n json.Number) (isInt, ok bool) {
	if _, ok := plainInt(string(n)); ok {
		return true, true
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return false, false
	}
	return r.IsInt(), true
}

// jsonType is the JSON type of a decoded value, "" for a Go type Decode
// does not make.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// equal compares two JSON values as the validator does (numbers by value).
func equal(a, b any) verdict {
	ta, tb := jsonType(a), jsonType(b)
	if ta == "" || tb == "" {
		return unsure
	}
	if ta != tb {
		return no
	}
	switch a := a.(type) {
	case nil:
		return yes
	case bool:
		return is(a == b.(bool))
	case string:
		return is(a == b.(string))
	case json.Number:
		bn := b.(json.Number)
		if a == bn {
			return yes
		}
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(bn))
		if !ok1 || !ok2 {
			return unsure
		}
		return is(ra.Cmp(rb) == 0)
	case []any:
		bs := b.([]any)
		if len(a) != len(bs) {
			return no
		}
		r := yes
		for i := range a {
			if !fold(&r, equal(a[i], bs[i])) {
				return no
			}
		}
		return r
	case map[string]any:
		bm := b.(map[string]any)
		if len(a) != len(bm) {
			return no
		}
		r := yes
		for k, av := range a {
			bv, ok := bm[k]
			if !ok {
				return no
			}
			if !fold(&r, equal(av, bv)) {
				return no
			}
		}
		return r
	}
	return unsure
}

func is(b bool) verdict {
	if b {
		return yes
	}
	return no
}
