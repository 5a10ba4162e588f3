package migrate

import (
	"fmt"
	"maps"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// RecordStep is a step between two versions of the one-file-per-record
// layout (format 1.0.0 and later): every record is rewritten on its own by
// Up, and every record, file and manifest hash is recomputed; ids never
// change. The machinery around it is shared (RegisterRecordStep): nothing
// is laundered (each stored record and file hash is checked, and each file
// must be the one the old manifest lists), a file an interrupted earlier
// run already renamed in at a later version of the chain is accepted when
// its form at From (Down) is the file the manifest lists, and the result of
// a step to the current version passes the whole check pipeline.
//
// A format version that changes records is one RecordStep: Up and Down on
// a record value (a clone: modify it in place).
type RecordStep struct {
	From, To string
	// Describe is the step's line in help texts; Summary its report line,
	// with %d for the number of files.
	Describe, Summary string
	// Up turns a record of provider p at From into its form at To and
	// returns a note for the migration plan ("" = none).
	Up func(p string, rec map[string]any) (note string, err *upgradeError)
	// Down turns a record at To back into its form at From; an error
	// means the record cannot have been written by this step.
	Down func(rec map[string]any) *upgradeError
}

// recordSteps holds the registered record steps by From version.
var recordSteps = map[string]*RecordStep{}

// RegisterRecordStep registers s in the default registry and in the chain
// of record steps.
func RegisterRecordStep(s *RecordStep) {
	if _, dup := recordSteps[s.From]; dup {
		panic("migrate: record step from " + s.From + " registered twice")
	}
	recordSteps[s.From] = s
	Register(Step{From: s.From, To: s.To, Describe: s.Describe, Apply: s.apply})
}

// chain returns the record steps from → to (nil, false when none leads
// there). from == to is the empty chain.
func chain(from, to string) ([]*RecordStep, bool) {
	var out []*RecordStep
	for v := from; v != to; {
		s, ok := recordSteps[v]
		if !ok || len(out) > len(recordSteps) {
			return nil, false
		}
		out = append(out, s)
		v = s.To
	}
	return out, true
}

// RuleManifest100 names a file that is not the one its manifest lists.
const RuleManifest100 = "manifest-mismatch"

// upgradeError is a problem of one file, for the step's report.
type upgradeError struct{ pointer, rule, msg string }

// apply moves a set at s.From to s.To.
func (s *RecordStep) apply(in *Set, env Env) (*Set, *result.MigrateStep, error) {
	rep := &result.MigrateStep{From: s.From, To: s.To}
	problem := func(file, ptr, rule, msg, fix string) {
		rep.Problems = append(rep.Problems, finding.Finding{File: file, Pointer: ptr, Rule: rule, Severity: finding.Error, Message: msg, Fix: fix})
	}
	const restore = "restore the file from Git (migration never launders a changed snapshot), or re-record the call"

	manData, ok := in.Files[snapshot.ManifestName]
	if !ok {
		problem(snapshot.ManifestName, "", check.RuleManifestMissing, "the "+s.From+" set has no manifest.json",
			"restore manifest.json from Git, or run traceforge snapshot reindex with the traceforge that wrote the set")
		return nil, rep, nil
	}
	listed := map[string]snapshot.ManifestEntry{} // rel → entry
	createdAt := snapshot.FormatTimestamp(env.Now)
	if v, err := snapshot.Decode(manData); err != nil {
		problem(snapshot.ManifestName, "", check.RuleJSON, err.Error(), "restore manifest.json from Git")
	} else if m, ok := v.(map[string]any); !ok {
		problem(snapshot.ManifestName, "", check.RuleSchema, "manifest.json is not a JSON object", "restore manifest.json from Git")
	} else {
		if h, err := snapshot.DocumentHash(m); err != nil || h != m["hash"] {
			problem(snapshot.ManifestName, "/hash", check.RuleManifestHash, "manifest hash mismatch: the manifest was changed after it was hashed", "restore manifest.json from Git")
		}
		man := snapshot.ManifestFromValue(m)
		if man.CreatedAt != "" {
			createdAt = man.CreatedAt
		}
		for _, e := range man.Entries {
			listed[e.File] = e
		}
	}

	out := &Set{Version: s.To, Files: map[string][]byte{}}
	var entries []snapshot.ManifestEntry
	for _, rel := range in.Rels() {
		if rel == snapshot.ManifestName {
			continue
		}
		p, id, ok := snapshot.ValidRelPath(rel)
		if !ok {
			problem(rel, "", check.RuleUnexpectedFile, "not a snapshot file name (<provider>/<12 hex>.json)", "move the file out of the folder, then rerun")
			continue
		}
		entry, isListed := listed[rel]
		delete(listed, rel)
		data, fromHash, note, uerr := convert(p, in.Files[rel], s.From, s.To)
		if uerr != nil {
			problem(rel, uerr.pointer, uerr.rule, uerr.msg, restore)
			continue
		}
		if !isListed || entry.ID != id || entry.Provider != p || entry.Hash != fromHash {
			problem(rel, "", RuleManifest100, "the file is not the one manifest.json lists (missing entry or different hash)", restore)
			continue
		}
		fileHash, ok := s.checkFile(rel, data, env, rep)
		if !ok {
			continue
		}
		out.Files[rel] = data
		entries = append(entries, snapshot.ManifestEntry{ID: id, Provider: p, File: rel, Hash: fileHash})
		rep.Items = append(rep.Items, result.MigrateItem{Source: rel, Target: rel, Note: note})
	}
	for _, rel := range sortedEntryFiles(listed) {
		problem(snapshot.ManifestName, "", check.RuleManifestEntry, fmt.Sprintf("lists %s, which is not in the folder", rel),
			"restore the file from Git, or run traceforge snapshot reindex with the traceforge that wrote the set")
	}
	rep.Summary = fmt.Sprintf(s.Summary, len(entries))
	if len(rep.Problems) > 0 {
		return nil, rep, nil
	}
	man, err := snapshot.BuildManifestAt(s.To, entries, createdAt, snapshot.FormatTimestamp(env.Now))
	if err != nil {
		return nil, nil, err
	}
	if out.Files[snapshot.ManifestName], err = snapshot.MarshalManifest(man); err != nil {
		return nil, nil, err
	}
	return out, rep, nil
}

// checkFile returns the combined hash of a converted file. A file of the
// current version passes the whole check pipeline here (its problems go in
// the report); an intermediate one is checked by the steps after it.
func (s *RecordStep) checkFile(rel string, data []byte, env Env, rep *result.MigrateStep) (string, bool) {
	if s.To != snapshot.Version {
		v, err := snapshot.Decode(data)
		if err != nil {
			rep.Problems = append(rep.Problems, finding.Finding{File: rel, Rule: check.RuleJSON, Severity: finding.Error, Message: err.Error()})
			return "", false
		}
		h, _ := v.(map[string]any)["hash"].(string)
		return h, true
	}
	sn, fs := check.CheckBytes(rel, data, env.Check)
	for _, f := range fs {
		if f.Severity == finding.Error {
			rep.Problems = append(rep.Problems, f)
		} else {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s", rel, f.Message))
		}
	}
	if sn == nil || fs.Errors() > 0 {
		return "", false
	}
	return sn.FileHash, true
}

// convert returns the bytes at version to of one snapshot file of provider
// p stored at version from (or at a later version of the chain: a file an
// interrupted run renamed in), and the combined hash of its form at from
// (what the old manifest lists). The stored record and file hashes must
// hold.
func convert(p string, data []byte, from, to string) (out []byte, fromHash, note string, uerr *upgradeError) {
	v, err := snapshot.Decode(data)
	if err != nil {
		return nil, "", "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	doc, _ := v.(map[string]any)
	recs, _ := doc["snapshots"].([]any)
	version, _ := doc["version"].(string)
	if doc == nil || len(recs) != 1 {
		return nil, "", "", &upgradeError{"/snapshots", check.RuleSchema, "a snapshot file holds exactly one record"}
	}
	rec, ok := recs[0].(map[string]any)
	if !ok {
		return nil, "", "", &upgradeError{"/snapshots/0", check.RuleSchema, "the record is not a JSON object"}
	}
	down, ok := chain(from, version)
	if !ok {
		return nil, "", "", &upgradeError{"/version", check.RuleVersion, fmt.Sprintf("format %q, not %s", version, from)}
	}
	if h, err := snapshot.RecordHash(rec); err != nil || h != rec["hash"] {
		return nil, "", "", &upgradeError{"/snapshots/0/hash", check.RuleRecordHash, "record hash mismatch: the record was changed after it was hashed"}
	}
	if h, err := snapshot.FileHash(version, []string{rec["hash"].(string)}); err != nil || h != doc["hash"] {
		return nil, "", "", &upgradeError{"/hash", check.RuleFileHash, "file hash mismatch: the file was changed after it was hashed"}
	}
	old := maps.Clone(rec)
	for i := len(down) - 1; i >= 0; i-- {
		if uerr := down[i].Down(old); uerr != nil {
			return nil, "", "", uerr
		}
	}
	up, ok := chain(from, to)
	if !ok {
		return nil, "", "", &upgradeError{"/version", check.RuleVersion, fmt.Sprintf("no migration from %s to %s", from, to)}
	}
	cur := maps.Clone(old)
	for _, s := range up {
		n, uerr := s.Up(p, cur)
		if uerr != nil {
			return nil, "", "", uerr
		}
		if n != "" {
			note = n
		}
	}
	if err := snapshot.Rehash(old); err != nil {
		return nil, "", "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	if err := snapshot.Rehash(cur); err != nil {
		return nil, "", "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	oldDoc, err := snapshot.FileDocumentAt(from, old)
	if err != nil {
		return nil, "", "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	newDoc, err := snapshot.FileDocumentAt(to, cur)
	if err != nil {
		return nil, "", "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	if out, err = snapshot.MarshalFile(newDoc); err != nil {
		return nil, "", "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	return out, oldDoc["hash"].(string), note, nil
}

// upgradeFile returns the bytes of one 1.0.0 snapshot file of provider p
// (or of a later version of the chain) at the current version, and the
// file's 1.0.0 combined hash.
func upgradeFile(p string, data []byte) ([]byte, string, *upgradeError) {
	out, h, _, uerr := convert(p, data, snapshot.PreviousVersion, snapshot.Version)
	return out, h, uerr
}

// UpgradeFile returns the bytes one snapshot file of provider p would have
// after `snapshot migrate` to the current version, from the version the
// file says it is at (1.0.0 or later; a file at the current version comes
// back as it is, re-encoded). The stored hashes must hold; nothing is
// written. traceforge diff uses it to compare a set at a revision from
// before an upgrade with the work tree.
func UpgradeFile(p string, data []byte) ([]byte, error) {
	from := snapshot.PreviousVersion
	if v, err := snapshot.Decode(data); err == nil {
		if m, ok := v.(map[string]any); ok {
			if s, ok := m["version"].(string); ok {
				if _, onChain := chain(s, snapshot.Version); onChain {
					from = s
				}
			}
		}
	}
	out, _, _, uerr := convert(p, data, from, snapshot.Version)
	if uerr != nil {
		msg := uerr.msg
		if uerr.pointer != "" {
			msg = uerr.pointer + ": " + msg
		}
		return nil, fmt.Errorf("%s [%s]", msg, uerr.rule)
	}
	return out, nil
}

// UpgradableFileVersion reports whether a snapshot file at version can be
// brought to the current version file by file (UpgradeFile).
func UpgradableFileVersion(version string) bool {
	if version == snapshot.Version {
		return false
	}
	_, ok := chain(version, snapshot.Version)
	return ok
}
