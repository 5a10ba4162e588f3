package check

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/finding"
	pv "github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ZeroTemperature is the largest temperature that counts as zero: go-openai
// cannot send 0 (it drops the field), so its users send
// math.SmallestNonzeroFloat32 (DESIGN §7).
const ZeroTemperature = 1e-6

// Options configure the pipeline.
type Options struct {
	Config *Config
	// CanMigrate reports whether a registered migration path leads from
	// version to the current one (set by the migrate package's user).
	CanMigrate func(version string) bool
	// Slim keeps only what a static verification reports once a file is
	// checked (Snapshot.lean: file, id, key, hashes, the policy exception):
	// its memory must not grow with the size of the snapshots. Replay,
	// record and list need full records.
	Slim bool
	// Trim, when set (and Slim is not), replaces each checked snapshot
	// before the set keeps it: a set that is only served keeps what replay
	// needs (replay.Entries.Compact), not every decoded record.
	Trim func(*Snapshot) *Snapshot
	// Built, when set, is what the writer of the document being checked
	// computed from the values it encoded (record, for the file it is about
	// to put in place). CheckDocument uses it only if the decoded document
	// holds exactly Built.Doc (snapshot.SameJSON).
	Built *Built
}

// Built is what a writer computed from a snapshot document it built
// (snapshot.NewRecord, FileDocument): the document, its record's request
// key with the key normalizers that applied, and its lineage (nil: the
// request continues no conversation). When the decoded file holds exactly
// Doc, these are the values CheckDocument would recompute from it, and the
// record hash was computed from those same values: the check takes them
// instead of canonicalizing the record three more times. Every other rule
// (schema, versions, source, ids, policy, secrets) runs as for any file,
// and a record chained by previous_response_id is always keyed again.
type Built struct {
	Doc     map[string]any
	Key     string
	Applied []string
	Lineage *snapshot.Lineage
	// BaseKey is the request's key without its occurrence when Key is a
	// later occurrence's (registry.OccurrenceKey); "" = Key.
	BaseKey string
}

// Snapshot is one checked snapshot file.
type Snapshot struct {
	Rel      string // <provider>/<id>.json
	Provider string
	ID       string // the record's id (Record.ID)
	ParentID string // the record's lineage (Record.ParentID, Turn)
	Turn     int
	Key      string // full request key recomputed from the record
	// BaseKey is the key of the record's request without its occurrence
	// (DESIGN §13.4): Key itself for the first (Record.Occurrence 0).
	BaseKey  string
	FileHash string // the stored combined hash of the file
	// Record is the checked record; in a lean set (Options.Slim) it is nil
	// unless a policy exception applies, and then holds only the id and
	// the model the exception matched.
	Record    *snapshot.Record
	Exception *Exception // policy exception applied, if any
	Errors    int        // error findings about this file
	// ResponseID is the "id" of the stored response body and ChainedFrom
	// the request's previous_response_id when the record is chained by it
	// (has lineage); both "" otherwise. CheckSet compares them across the
	// set (DESIGN §12.9 item 5); they survive Slim, like ID, ParentID and
	// Turn.
	ResponseID, ChainedFrom string
}

// VersionFinding returns the specification's message for an unsupported
// version, or nil for the current one.
func VersionFinding(file, pointer, version string, opts Options) *finding.Finding {
	if version == snapshot.Version {
		return nil
	}
	f := &finding.Finding{File: file, Pointer: pointer, Rule: RuleVersion, Severity: finding.Error}
	if compareVersions(version, snapshot.Version) > 0 {
		f.Message = fmt.Sprintf("snapshot version %s is newer than this traceforge supports", version)
		f.Fix = "upgrade traceforge"
		f.Verbatim = fmt.Sprintf("❌ Snapshot version %s is newer than this traceforge supports\n   Current version: %s\n   Upgrade traceforge", version, snapshot.Version)
		return f
	}
	f.Message = fmt.Sprintf("snapshot version %s is no longer supported", version)
	fix := "Re-record all snapshots"
	if opts.CanMigrate != nil && opts.CanMigrate(version) {
		fix += fmt.Sprintf(" (or run: traceforge snapshot migrate --from %s --to %s)", version, snapshot.Version)
	}
	f.Fix = fix
	f.Verbatim = fmt.Sprintf("❌ Snapshot version %s is no longer supported\n   Current version: %s\n   %s", version, snapshot.Version, fix)
	return f
}

// compareVersions compares dotted numeric versions; non-numeric parts compare as text.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			fmt.Sscanf(pa[i], "%d", &x)
		}
		if i < len(pb) {
			fmt.Sscanf(pb[i], "%d", &y)
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// CheckBytes decodes and checks one snapshot file's bytes. rel is
// <provider>/<id>.json (already allow-listed), the file the findings name.
func CheckBytes(rel string, data []byte, opts Options) (*Snapshot, finding.Findings) {
	provider, id, ok := snapshot.ValidRelPath(rel)
	if !ok {
		return nil, finding.Findings{{File: rel, Rule: RuleUnexpectedFile, Severity: finding.Error,
			Message: "not a snapshot file name (<provider>/<12 hex>.json)", Fix: "remove the file or run traceforge snapshot reindex"}}
	}
	v, err := snapshot.Decode(data)
	if err != nil {
		var de *snapshot.DecodeError
		f := finding.Finding{File: rel, Rule: RuleJSON, Severity: finding.Error, Message: err.Error(),
			Fix: "restore the file from Git or re-record it (traceforge record)"}
		if errors.As(err, &de) {
			f.Pointer = de.Pointer
			f.Message = fmt.Sprintf("%s at line %d, column %d", de.Reason, de.Line, de.Column)
		}
		return nil, finding.Findings{f}
	}
	s, fs := CheckDocument(rel, provider, v, opts)
	if s != nil && s.Record.ID != id {
		fs = append(fs, finding.Finding{File: rel, Pointer: "/snapshots/0/id", Rule: RuleID, Severity: finding.Error,
			Message: fmt.Sprintf("id %q does not match the file name %s.json", s.Record.ID, id),
			Fix:     "rename the file to its id, or re-record it"})
	}
	if s != nil {
		s.Rel = rel
		s.Errors = fs.Errors()
	}
	return s, fs
}

// CheckDocument checks a decoded snapshot file of provider: version, schema,
// source path, id ↔ request key, record and file hashes, lineage,
// determinism policy and the secret scan. Every problem is reported.
// The returned Snapshot is nil when the document is not schema-valid.
func CheckDocument(file, provider string, v any, opts Options) (*Snapshot, finding.Findings) {
	var fs finding.Findings
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, finding.Findings{{File: file, Rule: RuleSchema, Severity: finding.Error, Message: "a snapshot file must be a JSON object", Fix: "re-record it"}}
	}
	if ver, ok := doc["version"].(string); ok {
		if f := VersionFinding(file, "/version", ver, opts); f != nil {
			return nil, finding.Findings{*f}
		}
	}
	recordDef, format, ef := recordSchema(file, provider, doc)
	fs = append(fs, ef...)
	for _, vi := range schema.ValidateFile(doc, recordDef) {
		fs = append(fs, finding.Finding{File: file, Pointer: vi.Pointer, Rule: RuleSchema, Severity: finding.Error,
			Message: vi.Reason, Fix: schemaFix(vi)})
	}
	fs = withDefaultsFixes(doc, fs)
	// The secret scan runs even on schema-invalid files: a key must never pass unnoticed.
	fs = append(fs, secretFindings(file, doc, opts.Config)...)
	if fs.Errors() > 0 {
		return nil, fs
	}
	recV := doc["snapshots"].([]any)[0].(map[string]any)
	rec := snapshot.RecordFromValue(provider, recV)
	if w, ok := recV["response"].(map[string]any)["wire"].(map[string]any); ok {
		// A stream stored as its events (format 1.2.0) has no body: the
		// answer is what its events assemble to (docs/format.md).
		ws, err := rec.Response.Events, error(nil)
		if ws == nil { // RecordFromValue keeps no stream it cannot read: say why
			_, err = snapshot.WireStreamFromValue(w)
		}
		if err == nil && rec.Response.Body == nil {
			rec.Response.Body, err = pv.AssembleWire(format, ws)
		}
		if err != nil {
			return nil, append(fs, finding.Finding{File: file, Pointer: "/snapshots/0/response/wire", Rule: RuleSchema, Severity: finding.Error,
				Message: "the stream's events do not make an answer: " + err.Error(), Fix: "restore the file from Git or re-record it; never edit snapshots by hand"})
		}
	}
	s := &Snapshot{Provider: provider, ID: rec.ID, ParentID: rec.ParentID, Turn: rec.Turn, Record: rec}
	s.ResponseID, _ = rec.Response.Body["id"].(string)
	if prev, ok := rec.Request["previous_response_id"].(string); ok && rec.ParentID != "" {
		s.ChainedFrom = prev
	}
	s.FileHash, _ = doc["hash"].(string)
	const rp = "/snapshots/0"

	if f := sourceFinding(file, rec.Source.File); f != nil {
		fs = append(fs, *f)
	}
	b := opts.Built
	built := b != nil && s.ChainedFrom == "" && snapshot.SameJSON(doc, b.Doc)
	var key string
	var applied []string
	if built {
		key, applied = b.Key, b.Applied
		s.BaseKey = b.BaseKey
		if s.BaseKey == "" {
			s.BaseKey = key
		}
	} else {
		var err error
		kc := RecordKeyContext(rec, opts.Config)
		key, applied, err = registry.Key(provider, pv.Endpoint(rec.Endpoint), rec.Request, rec.RequestHeaders, kc)
		if err != nil {
			fs = append(fs, finding.Finding{File: file, Pointer: rp + "/request", Rule: RuleJSON, Severity: finding.Error, Message: err.Error()})
			return nil, fs
		}
		// A later occurrence of an identical request (DESIGN §13.4) is
		// keyed by the request's key and its place.
		s.BaseKey = key
		key = registry.OccurrenceKey(key, rec.Occurrence)
	}
	s.Key = key
	fs = append(fs, keyFindings(file, rec, key, applied, opts.Config.Normalizer() != nil)...)
	fs = append(fs, defaultsFindings(file, rec, opts.Config)...)
	if built {
		// The writer hashed these very values.
	} else if h, err := snapshot.RecordHash(recV); err == nil && h != rec.Hash {
		fs = append(fs, finding.Finding{File: file, Pointer: rp + "/hash", Rule: RuleRecordHash, Severity: finding.Error,
			Message: fmt.Sprintf("record hash mismatch: stored %s, computed %s — the record was changed after it was hashed", rec.Hash, h),
			Fix:     "restore the file from Git or re-record it; never edit snapshots by hand"})
	}
	if h, err := snapshot.FileHash(doc["version"].(string), []string{rec.Hash}); err == nil && h != s.FileHash {
		fs = append(fs, finding.Finding{File: file, Pointer: "/hash", Rule: RuleFileHash, Severity: finding.Error,
			Message: fmt.Sprintf("file hash mismatch: stored %s, computed %s", s.FileHash, h),
			Fix:     "restore the file from Git or re-record it"})
	}
	if built {
		var parent string
		var turn int
		if b.Lineage != nil {
			parent, turn = b.Lineage.ParentID, b.Lineage.Turn
		}
		fs = append(fs, lineageFindings(file, rec, parent, turn, b.Lineage != nil)...)
	} else if parent, turn, ok, err := registry.Lineage(provider, pv.Endpoint(rec.Endpoint), rec.Request, rec.RequestHeaders, RecordKeyContext(rec, opts.Config)); err == nil {
		fs = append(fs, lineageFindings(file, rec, parent, turn, ok)...)
	}
	pf, ex := PolicyFindings(file, rp+"/request", format, rec.Request, opts.Config)
	fs = append(fs, withDefaultsFixes(doc, pf)...)
	s.Exception = ex
	if f := occurrenceFinding(file, format, rec, opts.Config); f != nil {
		fs = append(fs, *f)
	}
	return s, fs
}

// occurrenceFinding reports an LLM call's later occurrence (DESIGN §13.4):
// the same request was answered differently in one run, which is
// nondeterminism — an error under the determinism policy, a note when a
// policy exception relaxes temperature for the model. Exchanges repeat by
// nature (polling): nil.
func occurrenceFinding(file string, f pv.Format, rec *snapshot.Record, cfg *Config) *finding.Finding {
	if rec.Occurrence == 0 || f == nil || pv.IsExchange(f) {
		return nil
	}
	out := &finding.Finding{File: file, Pointer: "/snapshots/0/occurrence", Rule: RuleDeterminism, Severity: finding.Error,
		Message: fmt.Sprintf("occurrence %d: the same request was answered differently within one run (nondeterminism); replay answers its occurrences in turn", rec.Occurrence+1),
		Fix:     "record with temperature 0 (and a fixed seed where the API takes one), or declare a per-model exception relaxing temperature in " + ConfigName}
	if ex := cfg.ExceptionForRequest(rec.Request); ex.Relaxes("temperature") {
		out.Severity, out.Fix = finding.Note, ""
		out.Message += fmt.Sprintf(" — allowed by the exception for %s", ex.Model)
	}
	return out
}

// lean returns the part of a checked snapshot a static verification keeps
// (Options.Slim): file, provider, id, key, file hash, error count and the
// policy exception; the record only when an exception applies, holding the
// id and the model the exception matched (the report names it).
func (s *Snapshot) lean() *Snapshot {
	c := *s
	c.Record = nil
	if s.Exception != nil {
		c.Record = &snapshot.Record{Provider: s.Record.Provider, ID: s.Record.ID}
		if m, ok := s.Record.Request["model"]; ok {
			c.Record.Request = map[string]any{"model": m}
		}
	}
	return &c
}

// WarmSchemas compiles every schema CheckDocument validates against (the
// envelope, the manifest, the record definition of each wire format and the
// generic one) ahead of the first check.
func WarmSchemas() error {
	defs := []string{schema.GenericRecord, pv.ExchangeSchema}
	for _, f := range registry.Formats() {
		defs = append(defs, f.RecordSchema())
	}
	return schema.Warm(defs...)
}

// recordSchema returns the record definition of the format that owns the
// record's stored endpoint (schema per endpoint, DESIGN §12.2). A record
// whose endpoint no format of its provider owns is checked against the
// generic record definition and reported.
func recordSchema(file, provider string, doc map[string]any) (string, pv.Format, finding.Findings) {
	recs, _ := doc["snapshots"].([]any)
	if len(recs) == 0 {
		return schema.GenericRecord, nil, nil
	}
	rec, _ := recs[0].(map[string]any)
	e, ok := rec["endpoint"].(string)
	if !ok {
		return schema.GenericRecord, nil, nil // the schema reports a missing or mistyped endpoint
	}
	f, err := registry.ForStored(provider, pv.Endpoint(e))
	if err != nil {
		return schema.GenericRecord, nil, finding.Findings{{File: file, Pointer: "/snapshots/0/endpoint", Rule: RuleSchema, Severity: finding.Error,
			Message: err.Error() + " (format " + snapshot.Version + " covers the routes listed in docs/format.md)",
			Fix:     "re-record the call with this traceforge, or restore the file from Git"}}
	}
	return f.RecordSchema(), f, nil
}

func schemaFix(v schema.Violation) string {
	switch {
	case strings.HasSuffix(v.Pointer, "/request/temperature") && strings.Contains(v.Reason, "is missing"):
		return "the request has no temperature, so it is not deterministic; go-openai drops a zero Temperature (omitempty): set " +
			"Temperature: math.SmallestNonzeroFloat32, which counts as 0 (docs/format.md, determinism); other clients: send temperature 0; then re-record"
	case strings.Contains(v.Reason, "is missing"):
		return "the snapshot is incomplete; re-record it (no field is ever guessed)"
	case strings.Contains(v.Reason, "unknown field"):
		return "remove the field or re-record the snapshot"
	default:
		return "re-record the snapshot with a valid request; snapshots are never edited by hand"
	}
}

// sourceFinding checks source.file: relative, slash-separated, no drive, no "..".
func sourceFinding(name, src string) *finding.Finding {
	bad := ""
	switch {
	case strings.HasPrefix(src, "/"):
		bad = "is an absolute path"
	case len(src) >= 2 && src[1] == ':':
		bad = "starts with a drive letter"
	case strings.Contains(src, "\\"):
		bad = "uses backslashes"
	case strings.ContainsRune(src, 0):
		bad = "contains a NUL byte"
	default:
		for _, seg := range strings.Split(src, "/") {
			if seg == ".." {
				bad = "contains a '..' segment"
			}
		}
	}
	if bad == "" {
		return nil
	}
	return &finding.Finding{File: name, Pointer: "/snapshots/0/source/file", Rule: RuleSource, Severity: finding.Error,
		Message: fmt.Sprintf("source.file %q %s; it must be relative to the project root, slash-separated", src, bad),
		Fix:     "send X-Traceforge-Source with a project-relative path (see docs/sources.md) and re-record"}
}

// RecordKeyContext is the key context of a stored record under the
// project's config: the record's own lineage resolves a Responses chain
// (provider.RecordKeyContext) and the config's declared key normalizers
// apply.
func RecordKeyContext(rec *snapshot.Record, cfg *Config) *pv.KeyContext {
	return pv.WithNormalizer(pv.RecordKeyContext(rec.ParentID, rec.Turn), cfg.Normalizer())
}

// RekeyFix is the fix for ids and key_normalizers made under another
// normalizer config.
const RekeyFix = "traceforge snapshot reindex --rekey (renames the file to the id the current config gives and rewrites the manifest)"

// keyFindings compares the stored id and key_normalizers with the key the
// request gives under the current config. When neither the config nor the
// record involves key normalizers, a mismatch means an edited request (id);
// otherwise the set was keyed under another config (rekey).
func keyFindings(file string, rec *snapshot.Record, key string, applied []string, haveRules bool) finding.Findings {
	const rp = "/snapshots/0"
	var fs finding.Findings
	want := snapshot.IDOf(key)
	switch {
	case rec.ID == want:
		if !slices.Equal(rec.KeyNormalizers, applied) {
			fs = append(fs, finding.Finding{File: file, Pointer: rp + "/key_normalizers", Rule: RuleRekey, Severity: finding.Error,
				Message: fmt.Sprintf("key_normalizers is %s, the current config gives %s", nameList(rec.KeyNormalizers), nameList(applied)),
				Fix:     RekeyFix})
		}
	case haveRules || len(rec.KeyNormalizers) > 0:
		fs = append(fs, finding.Finding{File: file, Pointer: rp + "/id", Rule: RuleRekey, Severity: finding.Error,
			Message: fmt.Sprintf("id %s does not match the request under the key normalizers of %s (they give %s)", rec.ID, ConfigName, want),
			Fix:     RekeyFix})
	default:
		fs = append(fs, finding.Finding{File: file, Pointer: rp + "/id", Rule: RuleID, Severity: finding.Error,
			Message: fmt.Sprintf("id %s does not match the request (its key gives %s): the request was edited after recording", rec.ID, want),
			Fix:     "re-record this call (traceforge record), or restore the file from Git"})
	}
	return fs
}

func nameList(names []string) string {
	if len(names) == 0 {
		return "[] (none)"
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// lineageFindings compares the stored lineage with the one the request
// gives (parent, turn; ok = the request continues a conversation).
func lineageFindings(file string, rec *snapshot.Record, parent string, turn int, ok bool) finding.Findings {
	const p = "/snapshots/0/lineage"
	switch {
	case !ok && rec.ParentID != "":
		return finding.Findings{{File: file, Pointer: p, Rule: RuleLineage, Severity: finding.Error,
			Message: "lineage is present but the request holds no assistant message", Fix: "re-record the snapshot"}}
	case ok && rec.ParentID == "":
		return finding.Findings{{File: file, Pointer: p, Rule: RuleLineage, Severity: finding.Error,
			Message: fmt.Sprintf("lineage is missing: the request continues a conversation (parent %s, turn %d)", parent, turn), Fix: "re-record the snapshot"}}
	case ok && (rec.ParentID != parent || rec.Turn != turn):
		return finding.Findings{{File: file, Pointer: p, Rule: RuleLineage, Severity: finding.Error,
			Message: fmt.Sprintf("lineage is {parent_id %s, turn %d}, the request gives {parent_id %s, turn %d}", rec.ParentID, rec.Turn, parent, turn), Fix: "re-record the snapshot"}}
	}
	return nil
}

// PolicyFindings applies the determinism policy (DESIGN §7, §12.2) to a
// request of format f: temperature 0 where the API has a temperature, an
// integer seed where it has a seed (f.Determinism), unless a per-model
// exception in the config relaxes them. It returns the exception used.
func PolicyFindings(file, ptr string, f pv.Format, req map[string]any, cfg *Config) (finding.Findings, *Exception) {
	var fs finding.Findings
	if f == nil {
		return nil, nil
	}
	tempPtr, seedPtr := f.Determinism()
	model, _ := req["model"].(string)
	ex := cfg.ExceptionForRequest(req)
	if tempPtr == "" && seedPtr == "" {
		return nil, nil // nothing to sample (embeddings): no policy, no exception
	}
	what := "temperature 0"
	if seedPtr != "" {
		what += " and a fixed integer seed"
	}
	fix := fmt.Sprintf("record with %s, or declare a per-model exception in %s (see docs/format.md)", what, ConfigName)
	if v, ok := pointerValue(req, tempPtr); ok && !ex.Relaxes("temperature") {
		if t, ok := snapshot.Float64(v); ok && t > ZeroTemperature {
			fs = append(fs, finding.Finding{File: file, Pointer: ptr + tempPtr, Rule: RuleDeterminism, Severity: finding.Error,
				Message: fmt.Sprintf("temperature is %v; snapshots must be recorded with temperature 0", v), Fix: fix})
		}
	}
	if seedPtr != "" && !ex.Relaxes("seed") {
		if _, ok := pointerValue(req, seedPtr); !ok {
			fs = append(fs, finding.Finding{File: file, Pointer: ptr + seedPtr, Rule: RuleDeterminism, Severity: finding.Error,
				Message: fmt.Sprintf("seed is missing; %s snapshots need a fixed integer seed", providerLabel(f.Provider())), Fix: fix})
		}
	}
	if ex != nil {
		fs = append(fs, finding.Finding{File: file, Pointer: ptr + "/model", Rule: RulePolicy, Severity: finding.Note,
			Message: fmt.Sprintf("nondeterministic by policy: model %q matches exception %q (relaxes %s); protected by verify --live --runs N", model, ex.Model, strings.Join(ex.Relax, ", "))})
	}
	return fs, ex
}

// providerLabel is a provider's name as people write it.
func providerLabel(p pv.Name) string {
	if d := registry.Provider(p); d != nil {
		return d.Title
	}
	if p == "" {
		return ""
	}
	return strings.ToUpper(string(p[:1])) + string(p[1:])
}

// pointerValue is the value at a JSON pointer of plain object members
// ("/a/b"; no escapes, no array indexes: what Format.Determinism names).
func pointerValue(v map[string]any, ptr string) (any, bool) {
	if ptr == "" {
		return nil, false
	}
	var cur any = v
	for _, tok := range strings.Split(ptr[1:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func secretFindings(file string, doc map[string]any, cfg *Config) finding.Findings {
	var fs finding.Findings
	for _, m := range append(ScanSecrets(doc, ""), scanB64Bodies(doc)...) {
		if cfg.allowed(m) {
			continue
		}
		fs = append(fs, finding.Finding{File: file, Pointer: m.Pointer, Rule: RuleSecret, Severity: finding.Error,
			Message: fmt.Sprintf("value matches the %s pattern ([REDACTED:%s]); snapshots must never hold credentials", m.Rule, m.Rule),
			Fix: fmt.Sprintf("remove the credential from the request and re-record; if it is a deliberate fake, allow it in %s: {\"allow_secrets\": [{\"pointer\": %q, \"sha256\": %q}]}",
				ConfigName, m.Pointer, m.SHA256)})
	}
	return fs
}

func sortStrings(s []string) { sort.Strings(s) }

// scanB64Bodies scans the bytes of an exchange record's base64 bodies
// (DESIGN §13.4: a multipart upload of a file holding a key would hide it
// from the scan of the record's strings), each match at the body_b64
// member's pointer.
func scanB64Bodies(doc map[string]any) []SecretMatch {
	recs, _ := doc["snapshots"].([]any)
	var out []SecretMatch
	for i, r := range recs {
		rec, _ := r.(map[string]any)
		for _, part := range []string{"request", "response"} {
			m, _ := rec[part].(map[string]any)
			out = append(out, scanB64(m, "body_b64", fmt.Sprintf("/snapshots/%d/%s/body_b64", i, part))...)
		}
		// A stream's binary events (DESIGN §13.4: secrets are scanned in
		// response.wire too).
		resp, _ := rec["response"].(map[string]any)
		wire, _ := resp["wire"].(map[string]any)
		events, _ := wire["events"].([]any)
		for j, e := range events {
			ev, _ := e.(map[string]any)
			for _, name := range []string{"data_b64", "frame_b64"} {
				out = append(out, scanB64(ev, name, fmt.Sprintf("/snapshots/%d/response/wire/events/%d/%s", i, j, name))...)
			}
		}
	}
	return out
}

// scanB64 scans the decoded bytes of m's base64 member name.
func scanB64(m map[string]any, name, pointer string) []SecretMatch {
	b64, ok := m[name].(string)
	if !ok {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil
	}
	return ScanSecrets(string(raw), pointer)
}
