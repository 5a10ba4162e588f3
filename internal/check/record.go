package check

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/finding"
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
}

// Snapshot is one checked snapshot file.
type Snapshot struct {
	Rel      string // <provider>/<id>.json
	Provider string
	ID       string // the record's id (Record.ID)
	Key      string // full request key recomputed from the record
	FileHash string // the stored combined hash of the file
	// Record is the checked record; in a lean set (Options.Slim) it is nil
	// unless a policy exception applies, and then holds only the id and
	// the model the exception matched.
	Record    *snapshot.Record
	Exception *Exception // policy exception applied, if any
	Errors    int        // error findings about this file
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
	for _, vi := range schema.ValidateFile(provider, doc) {
		fs = append(fs, finding.Finding{File: file, Pointer: vi.Pointer, Rule: RuleSchema, Severity: finding.Error,
			Message: vi.Reason, Fix: schemaFix(vi)})
	}
	// The secret scan runs even on schema-invalid files: a key must never pass unnoticed.
	fs = append(fs, secretFindings(file, doc, opts.Config)...)
	if fs.Errors() > 0 {
		return nil, fs
	}
	recV := doc["snapshots"].([]any)[0].(map[string]any)
	rec := snapshot.RecordFromValue(provider, recV)
	s := &Snapshot{Provider: provider, ID: rec.ID, Record: rec}
	s.FileHash, _ = doc["hash"].(string)
	const rp = "/snapshots/0"

	if f := sourceFinding(file, rec.Source.File); f != nil {
		fs = append(fs, *f)
	}
	key, err := registry.RequestKey(provider, rec.Request, rec.RequestHeaders)
	if err != nil {
		fs = append(fs, finding.Finding{File: file, Pointer: rp + "/request", Rule: RuleJSON, Severity: finding.Error, Message: err.Error()})
		return nil, fs
	}
	s.Key = key
	if want := snapshot.IDOf(key); rec.ID != want {
		fs = append(fs, finding.Finding{File: file, Pointer: rp + "/id", Rule: RuleID, Severity: finding.Error,
			Message: fmt.Sprintf("id %s does not match the request (its key gives %s): the request was edited after recording", rec.ID, want),
			Fix:     "re-record this call (traceforge record), or restore the file from Git"})
	}
	if h, err := snapshot.RecordHash(recV); err == nil && h != rec.Hash {
		fs = append(fs, finding.Finding{File: file, Pointer: rp + "/hash", Rule: RuleRecordHash, Severity: finding.Error,
			Message: fmt.Sprintf("record hash mismatch: stored %s, computed %s — the record was changed after it was hashed", rec.Hash, h),
			Fix:     "restore the file from Git or re-record it; never edit snapshots by hand"})
	}
	if h, err := snapshot.FileHash(doc["version"].(string), []string{rec.Hash}); err == nil && h != s.FileHash {
		fs = append(fs, finding.Finding{File: file, Pointer: "/hash", Rule: RuleFileHash, Severity: finding.Error,
			Message: fmt.Sprintf("file hash mismatch: stored %s, computed %s", s.FileHash, h),
			Fix:     "restore the file from Git or re-record it"})
	}
	fs = append(fs, lineageFindings(file, provider, rec)...)
	pf, ex := PolicyFindings(file, rp+"/request", provider, rec.Request, opts.Config)
	fs = append(fs, pf...)
	s.Exception = ex
	return s, fs
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

func lineageFindings(file, provider string, rec *snapshot.Record) finding.Findings {
	parent, turn, ok, err := registry.Lineage(provider, rec.Request, rec.RequestHeaders)
	if err != nil {
		return nil
	}
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

// PolicyFindings applies the determinism policy (DESIGN §7) to a request:
// temperature 0 for both providers and an integer seed for OpenAI, unless a
// per-model exception in the config relaxes them. It returns the exception used.
func PolicyFindings(file, ptr, provider string, req map[string]any, cfg *Config) (finding.Findings, *Exception) {
	var fs finding.Findings
	model, _ := req["model"].(string)
	ex := cfg.ExceptionFor(model)
	fix := fmt.Sprintf("record with temperature 0%s, or declare a per-model exception in %s (see docs/format.md)", map[bool]string{true: " and a fixed integer seed", false: ""}[provider == "openai"], ConfigName)
	if t, ok := snapshot.Float64(req["temperature"]); ok && t > ZeroTemperature && !ex.Relaxes("temperature") {
		fs = append(fs, finding.Finding{File: file, Pointer: ptr + "/temperature", Rule: RuleDeterminism, Severity: finding.Error,
			Message: fmt.Sprintf("temperature is %v; snapshots must be recorded with temperature 0", req["temperature"]), Fix: fix})
	}
	if provider == "openai" && !ex.Relaxes("seed") {
		if _, ok := req["seed"]; !ok {
			fs = append(fs, finding.Finding{File: file, Pointer: ptr + "/seed", Rule: RuleDeterminism, Severity: finding.Error,
				Message: "seed is missing; OpenAI snapshots need a fixed integer seed", Fix: fix})
		}
	}
	if ex != nil {
		fs = append(fs, finding.Finding{File: file, Pointer: ptr + "/model", Rule: RulePolicy, Severity: finding.Note,
			Message: fmt.Sprintf("nondeterministic by policy: model %q matches exception %q (relaxes %s); protected by verify --live --runs N", model, ex.Model, strings.Join(ex.Relax, ", "))})
	}
	return fs, ex
}

func secretFindings(file string, doc map[string]any, cfg *Config) finding.Findings {
	var fs finding.Findings
	for _, m := range ScanSecrets(doc, "") {
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
