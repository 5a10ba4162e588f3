// Package schema holds traceforge's JSON Schemas (draft 2020-12, embedded)
// and validates decoded documents against them, reporting every violation
// with its JSON pointer and a reason in plain words.
package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed schemas/*.json
var files embed.FS

const base = "https://traceforge.dev/schema/1.2.0/"

// Violation is one schema rule a document breaks.
type Violation struct {
	Pointer string // JSON pointer of the offending value ("" = document root)
	Reason  string // plain words
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Reason
}

// GenericRecord is the definition of a record whose endpoint no wire format
// owns: the fields every record has, the request only as an object.
const GenericRecord = "#/$defs/record"

func newCompiler() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	for _, n := range []string{"snapshot-file.schema.json", "manifest.schema.json"} {
		b, err := files.ReadFile("schemas/" + n)
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(base+n, bytes.NewReader(b)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// compiled caches the compiled schemas by reference (the file envelope, the
// manifest, and each record definition a wire format names).
var compiled sync.Map // string → *jsonschema.Schema

// compileMu makes the first use of a reference compile it once: the
// workers of a set check all ask for the same schemas at once. It guards
// compiler.
var compileMu sync.Mutex

// compiler compiles every reference: it parses the schema files and checks
// them against the meta-schema once, on the first compilation (~12 ms);
// each later reference costs only its own definitions.
var compiler *jsonschema.Compiler

// schemaAt compiles (once) the definition at ref, a file name plus JSON
// pointer fragment inside the embedded schemas.
func schemaAt(ref string) (*jsonschema.Schema, error) {
	if s, ok := compiled.Load(ref); ok {
		return s.(*jsonschema.Schema), nil
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	if s, ok := compiled.Load(ref); ok {
		return s.(*jsonschema.Schema), nil
	}
	if compiler == nil {
		c, err := newCompiler()
		if err != nil {
			return nil, err
		}
		compiler = c
	}
	s, err := compiler.Compile(base + ref)
	if err != nil {
		return nil, err
	}
	compiled.Store(ref, s)
	return s, nil
}

// Warm compiles, ahead of their first use, the file envelope, the manifest
// and the record definitions recordDefs (provider.Format.RecordSchema
// values), so that no later validation pays for a compilation: record calls
// it before its first call arrives.
func Warm(recordDefs ...string) error {
	refs := []string{"snapshot-file.schema.json#/$defs/file", "manifest.schema.json"}
	for _, d := range recordDefs {
		refs = append(refs, "snapshot-file.schema.json"+d)
	}
	for _, r := range refs {
		if _, err := schemaAt(r); err != nil {
			return err
		}
	}
	return nil
}

func mustSchema(ref string) *jsonschema.Schema {
	s, err := schemaAt(ref)
	if err != nil {
		panic(fmt.Sprintf("embedded schema %s does not compile: %v", ref, err))
	}
	return s
}

// Source returns the text of an embedded schema, for docs and tools.
func Source(name string) ([]byte, error) { return files.ReadFile("schemas/" + name) }

// DefNames lists, sorted, the names under "$defs" of the embedded schema
// file name.
func DefNames(name string) ([]string, error) {
	src, err := Source(name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	names := make([]string, 0, len(doc.Defs))
	for n := range doc.Defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Has reports whether recordDef (a JSON pointer fragment such as
// "#/$defs/chatRecord") names a definition of snapshot-file.schema.json
// that compiles.
func Has(recordDef string) bool {
	_, err := schemaAt("snapshot-file.schema.json" + recordDef)
	return err == nil
}

// ValidateFile validates a decoded snapshot file: its envelope (version,
// snapshots, hash) and each record against recordDef, the record definition
// of the record's wire format (provider.Format.RecordSchema; GenericRecord
// when no format owns the record's endpoint). Values must come from a
// decoder that keeps numbers as json.Number.
func ValidateFile(doc any, recordDef string) []Violation {
	out := validate(mustSchema("snapshot-file.schema.json#/$defs/file"), doc)
	m, _ := doc.(map[string]any)
	recs, _ := m["snapshots"].([]any)
	rs := mustSchema("snapshot-file.schema.json" + recordDef)
	for i, r := range recs {
		if _, ok := r.(map[string]any); !ok {
			continue // the envelope reported it
		}
		prefix := fmt.Sprintf("/snapshots/%d", i)
		for _, v := range validate(rs, r) {
			v.Pointer = prefix + v.Pointer
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// ValidateManifest validates a decoded manifest.
func ValidateManifest(doc any) []Violation {
	return validate(mustSchema("manifest.schema.json"), doc)
}

func validate(s *jsonschema.Schema, doc any) []Violation {
	if accepts(s, doc) == yes {
		return nil // the validator would pass it too, at many times the cost
	}
	err := s.Validate(doc)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Reason: err.Error()}}
	}
	var out []Violation
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for _, v := range translate(e) {
			k := v.Pointer + "\x00" + v.Reason
			if !seen[k] {
				seen[k] = true
				out = append(out, v)
			}
		}
	}
	walk(ve)
	// One violation per pointer is enough (e.g. format and pattern on a timestamp).
	kept := out[:0]
	byPtr := map[string]bool{}
	for _, v := range out {
		if byPtr[v.Pointer] {
			continue
		}
		byPtr[v.Pointer] = true
		kept = append(kept, v)
	}
	out = kept
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

var (
	reMissing    = regexp.MustCompile(`^missing properties?: (.*)$`)
	reAdditional = regexp.MustCompile(`^additionalProperties (.*) not allowed$`)
	reExpected   = regexp.MustCompile(`^expected (\w+), but got (\w+)$`)
	reQuoted     = regexp.MustCompile(`'([^']*)'`)
)

// translate turns one leaf error of the validator into plain-words violations.
func translate(e *jsonschema.ValidationError) []Violation {
	ptr := e.InstanceLocation
	msg := e.Message
	kw := e.AbsoluteKeywordLocation
	switch {
	case reMissing.MatchString(msg):
		var out []Violation
		for _, m := range reQuoted.FindAllStringSubmatch(msg, -1) {
			out = append(out, Violation{Pointer: ptr + "/" + escape(m[1]), Reason: fmt.Sprintf("required field %q is missing", m[1])})
		}
		return out
	case reAdditional.MatchString(msg):
		var out []Violation
		for _, m := range reQuoted.FindAllStringSubmatch(msg, -1) {
			out = append(out, Violation{Pointer: ptr + "/" + escape(m[1]), Reason: fmt.Sprintf("unknown field %q is not allowed here", m[1])})
		}
		return out
	case reExpected.MatchString(msg):
		m := reExpected.FindStringSubmatch(msg)
		return []Violation{{Pointer: ptr, Reason: fmt.Sprintf("must be %s, not %s", withArticle(m[1]), withArticle(m[2]))}}
	case strings.HasSuffix(kw, "/then/not") && strings.Contains(kw, "chatShape"):
		return []Violation{{Pointer: ptr + "/max_tokens", Reason: "max_tokens and max_completion_tokens are both set; send only one"}}
	case strings.HasSuffix(kw, "/not") && strings.Contains(kw, "completionsShape"):
		return []Violation{{Pointer: ptr + "/messages", Reason: "a completions request (prompt) cannot also carry messages"}}
	case strings.Contains(kw, "completionsShape/properties/max_completion_tokens"):
		return []Violation{{Pointer: ptr, Reason: "max_completion_tokens is for chat completions; completions use max_tokens"}}
	case strings.HasSuffix(kw, "/const") && (strings.HasSuffix(ptr, "/n") || strings.HasSuffix(ptr, "/best_of")):
		return []Violation{{Pointer: ptr, Reason: "must be 1: a snapshot holds exactly one completion"}}
	case strings.HasSuffix(kw, "/const"):
		return []Violation{{Pointer: ptr, Reason: strings.Replace(msg, "value must be", "must be", 1)}}
	case strings.HasSuffix(kw, "/minItems"):
		return []Violation{{Pointer: ptr, Reason: "must not be empty (" + msg + ")"}}
	case strings.HasSuffix(kw, "/maxItems") && strings.HasSuffix(ptr, "/snapshots"):
		return []Violation{{Pointer: ptr, Reason: "a snapshot file holds exactly one record"}}
	case strings.HasSuffix(kw, "/pattern"):
		for pat, want := range patternWords {
			if strings.Contains(msg, pat) {
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, folderWords(msg))
				}
				return []Violation{{Pointer: ptr, Reason: "must be " + want}}
			}
		}
		return []Violation{{Pointer: ptr, Reason: "has the wrong shape: " + msg}}
	case strings.HasSuffix(kw, "/format"):
		return []Violation{{Pointer: ptr, Reason: "is not an RFC 3339 timestamp: " + msg}}
	case strings.HasSuffix(kw, "/minLength"):
		return []Violation{{Pointer: ptr, Reason: "must not be empty"}}
	case strings.HasSuffix(kw, "/enum"):
		return []Violation{{Pointer: ptr, Reason: msg}}
	}
	return []Violation{{Pointer: ptr, Reason: msg}}
}

// patternWords describes the schemas' patterns in plain words.
var patternWords = map[string]string{
	"^sha256:[0-9a-f]{64}$":         `"sha256:" followed by 64 lowercase hex digits`,
	"^[0-9a-f]{12}$":                "12 lowercase hex characters",
	`)/[0-9a-f]{12}\\.json$`:        "exactly <provider>/<id>.json (%s, 12 hex characters)",
	"T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$": "an RFC 3339 UTC timestamp like 2026-01-09T10:30:00Z",
	`^[0-9]+\\.[0-9]+\\.[0-9]+$`:    "a version like 1.0.0",
}

// folderWords lists the provider folders of a file pattern the schema
// names, ^(a|b|c)/…, as "a, b or c".
func folderWords(msg string) string {
	_, alt, _ := strings.Cut(msg, "^(")
	alt, _, _ = strings.Cut(alt, ")/")
	names := strings.Split(alt, "|")
	if len(names) < 2 {
		return alt
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func withArticle(t string) string {
	switch t {
	case "array", "integer", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func escape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
