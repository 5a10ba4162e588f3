package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// propertyNames lists every property name the embedded schemas declare.
func propertyNames(t testing.TB) []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				if k == "properties" {
					if props, ok := sub.(map[string]any); ok {
						for name := range props {
							seen[name] = true
						}
					}
				}
				walk(sub)
			}
		case []any:
			for _, sub := range v {
				walk(sub)
			}
		}
	}
	for _, n := range []string{"snapshot-file.schema.json", "manifest.schema.json"} {
		src, err := Source(n)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(src, &v); err != nil {
			t.Fatal(err)
		}
		walk(v)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// allRecordDefs lists every record definition of snapshot-file.schema.json.
func allRecordDefs(t testing.TB) []string {
	names, err := DefNames("snapshot-file.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var defs []string
	for _, name := range names {
		if name == "record" || strings.HasSuffix(name, "Record") {
			defs = append(defs, "#/$defs/"+name)
		}
	}
	if len(defs) < 10 {
		t.Fatalf("only %d record definitions found: %v", len(defs), defs)
	}
	return defs
}

// corpus is every snapshot file and manifest the repository's test data
// holds, plus generated files of every bench call kind and the test set
// builder: decoded documents, deduplicated, split into snapshot files and
// manifests.
func corpus(t testing.TB) (files, manifests []any) {
	seen := map[string]bool{}
	add := func(data []byte) {
		v, err := snapshot.Decode(data)
		if err != nil {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		canon, err := snapshot.Canonical(v)
		if err != nil || seen[string(canon)] {
			return
		}
		seen[string(canon)] = true
		if _, ok := m["created_at"]; ok {
			manifests = append(manifests, v)
		} else if _, ok := m["snapshots"]; ok {
			files = append(files, v)
		}
	}
	for _, root := range []string{"../../testdata", "../../internal"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 || !strings.HasSuffix(p, ".json") {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil && bytes.Contains(data, []byte(`"snapshots"`)) {
				add(data)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	items := snapshottest.Many(6)
	for _, k := range gen.Kinds {
		items = append(items, k.Item(0), k.Item(1), k.Item(7))
	}
	for _, it := range items {
		_, data, err := snapshottest.File(it)
		if err != nil {
			t.Fatal(err)
		}
		add(data)
	}
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.Many(3)...); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	add(data)
	if len(files) < 10 || len(manifests) < 2 {
		t.Fatalf("corpus too small: %d files, %d manifests", len(files), len(manifests))
	}
	return files, manifests
}

// agree checks accepts against the validator on one document: yes only
// when the validator passes it, no only when it fails it, never unsure on
// traceforge's schemas (every keyword they use is evaluated).
func agree(t *testing.T, s *jsonschema.Schema, what string, doc any) (valid bool) {
	t.Helper()
	valid = s.Validate(doc) == nil
	switch got := accepts(s, doc); {
	case got == unsure:
		t.Errorf("%s: accepts is unsure: a keyword of %s is not evaluated (the validator says valid=%v)", what, s.Location, valid)
	case (got == yes) != valid:
		t.Errorf("%s: accepts says %v, the validator says valid=%v", what, got == yes, valid)
	}
	return valid
}

// mutants returns variants of v that each change one place: a member
// removed or added (an unknown one anywhere; near the top, each of names
// with the value 1), a value replaced by values of every type and by
// boundary numbers and strings, an array emptied or its first item doubled.
func mutants(v any, names []string) []any {
	replacements := []any{nil, true, "", "x", "2026-02-30T10:30:00Z", "abc123def456",
		json.Number("0"), json.Number("-1"), json.Number("1"), json.Number("1.5"), json.Number("2.5"),
		json.Number("1e2"), json.Number("2.0"), []any{}, map[string]any{}}
	var out []any
	var walk func(cur any, depth int, set func(any) any)
	walk = func(cur any, depth int, set func(any) any) {
		for _, r := range replacements {
			out = append(out, set(r))
		}
		switch cur := cur.(type) {
		case map[string]any:
			out = append(out, set(with(cur, "zz_unknown", "x")))
			if depth <= 1 {
				for _, n := range names {
					if _, ok := cur[n]; !ok {
						out = append(out, set(with(cur, n, json.Number("1"))))
					}
				}
			}
			for k, sub := range cur {
				out = append(out, set(without(cur, k)))
				walk(sub, depth+1, func(n any) any { return set(with(cur, k, n)) })
			}
		case []any:
			if len(cur) > 0 {
				out = append(out, set(append(slices.Clone(cur), cur[0])))
			}
			for i, sub := range cur {
				walk(sub, depth+1, func(n any) any {
					c := slices.Clone(cur)
					c[i] = n
					return set(c)
				})
			}
		}
	}
	walk(v, 0, func(n any) any { return n })
	return out
}

func with(m map[string]any, k string, v any) map[string]any {
	c := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		c[kk] = vv
	}
	c[k] = v
	return c
}

func without(m map[string]any, k string) map[string]any {
	c := with(m, k, nil)
	delete(c, k)
	return c
}

// TestAcceptsAgreesWithValidator: over the corpus and one-change mutants of
// it, accepts never answers differently from the validator (so the findings
// validate returns are exactly the validator's) and is never unsure.
func TestAcceptsAgreesWithValidator(t *testing.T) {
	files, manifests := corpus(t)
	envelope := mustSchema("snapshot-file.schema.json#/$defs/file")
	defs := allRecordDefs(t)
	names := propertyNames(t)
	// Every valid document is compared; mutants are made of the first
	// two documents each record definition accepts (more adds time, not
	// keywords).
	validPairs, mutated := 0, 0
	mutatedPerDef := map[string]int{}
	for fi, doc := range files {
		agree(t, envelope, fmt.Sprintf("file %d envelope", fi), doc)
		recs, _ := doc.(map[string]any)["snapshots"].([]any)
		if len(recs) == 0 {
			continue
		}
		rec := recs[0]
		for _, def := range defs {
			rs := mustSchema("snapshot-file.schema.json" + def)
			if !agree(t, rs, fmt.Sprintf("file %d as %s", fi, def), rec) {
				continue
			}
			validPairs++
			if mutatedPerDef[def]++; mutatedPerDef[def] > 2 {
				continue
			}
			for mi, m := range mutants(rec, names) {
				agree(t, rs, fmt.Sprintf("file %d as %s, mutant %d", fi, def, mi), m)
				mutated++
			}
		}
	}
	ms := mustSchema("manifest.schema.json")
	for mi, doc := range manifests {
		if !agree(t, ms, fmt.Sprintf("manifest %d", mi), doc) {
			continue
		}
		validPairs++
		for i, m := range mutants(doc, names) {
			agree(t, ms, fmt.Sprintf("manifest %d, mutant %d", mi, i), m)
			mutated++
		}
	}
	if validPairs < 15 || mutated < 5000 {
		t.Fatalf("too little compared: %d valid documents, %d mutants", validPairs, mutated)
	}
	t.Logf("%d valid documents, %d mutants", validPairs, mutated)
}

// compile compiles a test schema the way newCompiler does.
func compile(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	if err := c.AddResource("t.json", strings.NewReader(src)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("t.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAcceptsKeywords: each keyword accepts evaluates, on values that pass
// and fail it, agrees with the validator (including keywords the embedded
// schemas do not use today).
func TestAcceptsKeywords(t *testing.T) {
	for _, tc := range []struct {
		schema string
		docs   []string
	}{
		{`{"type":"integer"}`, []string{`1`, `1.0`, `1e2`, `1.5`, `-0`, `"1"`, `9007199254740993e-3`}},
		{`{"type":["string","null"]}`, []string{`"a"`, `null`, `1`, `[]`}},
		{`{"minimum":1,"maximum":2.5}`, []string{`0`, `1`, `2.5`, `2.50001`, `1e0`, `-1`, `"x"`}},
		{`{"exclusiveMinimum":1,"exclusiveMaximum":3}`, []string{`1`, `1.0001`, `2`, `3`, `2.9e0`}},
		{`{"const":1}`, []string{`1`, `1.0`, `10e-1`, `2`, `"1"`, `true`}},
		{`{"const":{"a":[1,"x"]}}`, []string{`{"a":[1,"x"]}`, `{"a":[1.0,"x"]}`, `{"a":[1]}`, `{"a":[1,"x"],"b":1}`}},
		{`{"enum":["a",null,true,2]}`, []string{`"a"`, `null`, `true`, `false`, `2.0`, `"b"`}},
		{`{"minLength":2,"maxLength":3}`, []string{`"a"`, `"ab"`, `"日本"`, `"日本語x"`, `1`}},
		{`{"pattern":"^a+$","format":"date-time"}`, []string{`"aaa"`, `"b"`, `3`}},
		{`{"format":"date-time"}`, []string{`"2026-01-09T10:30:00Z"`, `"2026-02-30T10:30:00Z"`, `"2026-01-09"`}},
		{`{"minProperties":1,"maxProperties":2}`, []string{`{}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`}},
		{`{"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`, []string{`{"a":"x","b":1}`, `{"a":1}`, `{"b":"x"}`, `{}`}},
		{`{"properties":{"a":true,"b":false}}`, []string{`{"a":1}`, `{"b":1}`, `{}`}},
		{`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":1,"maxItems":3}`, []string{`["a",1]`, `[1]`, `["a","b"]`, `[]`, `["a",1,2,3]`}},
		{`{"uniqueItems":true}`, []string{`[1,2]`, `[1,1.0]`, `[{"a":1},{"a":1}]`, `["a","b","a"]`, `[]`}},
		{`{"not":{"required":["a"]}}`, []string{`{"a":1}`, `{"b":1}`, `1`}},
		{`{"anyOf":[{"type":"string"},{"minimum":2}]}`, []string{`"x"`, `3`, `1`, `null`}},
		{`{"oneOf":[{"type":"integer"},{"minimum":2}]}`, []string{`1`, `3`, `2.5`, `"x"`}},
		{`{"if":{"required":["a"]},"then":{"required":["b"]},"else":{"required":["c"]}}`, []string{`{"a":1,"b":1}`, `{"a":1}`, `{"c":1}`, `{}`}},
		{`{"allOf":[{"$ref":"#/$defs/s"},{"maxLength":2}],"$defs":{"s":{"type":"string"}}}`, []string{`"ab"`, `"abc"`, `1`}},
	} {
		s := compile(t, tc.schema)
		for _, d := range tc.docs {
			doc, err := snapshot.Decode([]byte(d))
			if err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			agree(t, s, tc.schema+" on "+d, doc)
		}
	}
}

// TestAcceptsIsUnsureOfKeywordsItDoesNotEvaluate: a schema with a keyword
// accepts does not evaluate goes to the validator.
func TestAcceptsIsUnsureOfKeywordsItDoesNotEvaluate(t *testing.T) {
	for _, tc := range []struct{ schema, doc string }{
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, `{"x":1}`},
		{`{"type":"object","unevaluatedProperties":false}`, `{"x":1}`},
		{`{"type":"number","multipleOf":2}`, `4`},
		{`{"type":"array","contains":{"type":"string"}}`, `["a"]`},
		{`{"type":"object","propertyNames":{"maxLength":3}}`, `{"x":1}`},
		{`{"type":"object","dependentRequired":{"x":["y"]}}`, `{"x":1,"y":2}`},
	} {
		s := compile(t, tc.schema)
		doc, err := snapshot.Decode([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := accepts(s, doc); got != unsure {
			t.Errorf("%s on %s: accepts = %v, want unsure", tc.schema, tc.doc, got)
		}
	}
}

// FuzzAccepts: for any decodable document, accepts agrees with the
// validator under the envelope, every record definition and the manifest.
func FuzzAccepts(f *testing.F) {
	files, manifests := corpus(f)
	for _, d := range append(files, manifests...) {
		data, err := snapshot.Canonical(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	defs := allRecordDefs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := snapshot.Decode(data)
		if err != nil {
			return
		}
		agree(t, mustSchema("snapshot-file.schema.json#/$defs/file"), "envelope", doc)
		agree(t, mustSchema("manifest.schema.json"), "manifest", doc)
		rec := doc
		if m, ok := doc.(map[string]any); ok {
			if recs, ok := m["snapshots"].([]any); ok && len(recs) > 0 {
				rec = recs[0]
			}
		}
		for _, def := range defs {
			agree(t, mustSchema("snapshot-file.schema.json"+def), def, rec)
		}
	})
}
