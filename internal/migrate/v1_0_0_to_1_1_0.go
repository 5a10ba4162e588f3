package migrate

import (
	"fmt"
	"maps"
	"sort"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Format 1.1.0 adds the required record field "endpoint" (DESIGN §12.2):
// the step writes the key endpoint the 1.0.0 rule derives from the record
// (openai + "messages" → /v1/chat/completions, openai + "prompt" →
// /v1/completions, anthropic → /v1/messages), so ids stay as they are and
// every record, file and manifest hash is recomputed.
func init() {
	Register(Step{
		From:     snapshot.PreviousVersion,
		To:       snapshot.Version,
		Describe: "every record gets its key endpoint; hashes recomputed, ids unchanged",
		Apply:    migrate100,
	})
}

// RuleManifest100 names a 1.0.0 file that is not the one its manifest lists.
const RuleManifest100 = "manifest-mismatch"

// migrate100 moves a 1.0.0 set to 1.1.0. Nothing is laundered: every stored
// record and file hash is checked first, and each file must be the one the
// old manifest lists (same 1.0.0 file hash). A file already at 1.1.0 (an
// interrupted earlier run renamed it in before the manifest) is accepted
// when its 1.0.0 form is the file the manifest lists. Each new file then
// passes the whole check pipeline.
func migrate100(in *Set, env Env) (*Set, *result.MigrateStep, error) {
	rep := &result.MigrateStep{From: snapshot.PreviousVersion, To: snapshot.Version}
	problem := func(file, ptr, rule, msg, fix string) {
		rep.Problems = append(rep.Problems, finding.Finding{File: file, Pointer: ptr, Rule: rule, Severity: finding.Error, Message: msg, Fix: fix})
	}
	const restore = "restore the file from Git (migration never launders a changed snapshot), or re-record the call"

	manData, ok := in.Files[snapshot.ManifestName]
	if !ok {
		problem(snapshot.ManifestName, "", check.RuleManifestMissing, "the 1.0.0 set has no manifest.json",
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

	out := &Set{Version: snapshot.Version, Files: map[string][]byte{}}
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
		data, hash100, err := upgradeFile(p, in.Files[rel])
		if err != nil {
			problem(rel, err.pointer, err.rule, err.msg, restore)
			continue
		}
		if !isListed || entry.ID != id || entry.Provider != p || entry.Hash != hash100 {
			problem(rel, "", RuleManifest100, "the file is not the one manifest.json lists (missing entry or different hash)", restore)
			continue
		}
		s, fs := check.CheckBytes(rel, data, env.Check)
		for _, f := range fs {
			if f.Severity == finding.Error {
				rep.Problems = append(rep.Problems, f)
			} else {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s", rel, f.Message))
			}
		}
		if s == nil || fs.Errors() > 0 {
			continue
		}
		out.Files[rel] = data
		entries = append(entries, snapshot.ManifestEntry{ID: id, Provider: p, File: rel, Hash: s.FileHash})
		rep.Items = append(rep.Items, result.MigrateItem{Source: rel, Target: rel, Note: "endpoint " + s.Record.Endpoint})
	}
	for _, rel := range sortedEntryFiles(listed) {
		problem(snapshot.ManifestName, "", check.RuleManifestEntry, fmt.Sprintf("lists %s, which is not in the folder", rel),
			"restore the file from Git, or run traceforge snapshot reindex with the traceforge that wrote the set")
	}
	rep.Summary = fmt.Sprintf("%d snapshot file(s) get their endpoint; ids unchanged, hashes recomputed", len(entries))
	if len(rep.Problems) > 0 {
		return nil, rep, nil
	}
	now := snapshot.FormatTimestamp(env.Now)
	man, err := snapshot.BuildManifest(entries, createdAt, now)
	if err != nil {
		return nil, nil, err
	}
	if out.Files[snapshot.ManifestName], err = snapshot.MarshalManifest(man); err != nil {
		return nil, nil, err
	}
	return out, rep, nil
}

// upgradeError is a problem of one file, for the step's report.
type upgradeError struct{ pointer, rule, msg string }

// upgradeFile returns the 1.1.0 bytes of one snapshot file of provider p at
// 1.0.0 (or already at 1.1.0) and the file's 1.0.0 combined hash (what the
// old manifest lists). Stored record and file hashes must hold.
func upgradeFile(p string, data []byte) ([]byte, string, *upgradeError) {
	v, err := snapshot.Decode(data)
	if err != nil {
		return nil, "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	doc, _ := v.(map[string]any)
	recs, _ := doc["snapshots"].([]any)
	version, _ := doc["version"].(string)
	if doc == nil || len(recs) != 1 {
		return nil, "", &upgradeError{"/snapshots", check.RuleSchema, "a snapshot file holds exactly one record"}
	}
	rec, ok := recs[0].(map[string]any)
	if !ok {
		return nil, "", &upgradeError{"/snapshots/0", check.RuleSchema, "the record is not a JSON object"}
	}
	if version != snapshot.PreviousVersion && version != snapshot.Version {
		return nil, "", &upgradeError{"/version", check.RuleVersion, fmt.Sprintf("format %q, not %s", version, snapshot.PreviousVersion)}
	}
	if h, err := snapshot.RecordHash(rec); err != nil || h != rec["hash"] {
		return nil, "", &upgradeError{"/snapshots/0/hash", check.RuleRecordHash, "record hash mismatch: the record was changed after it was hashed"}
	}
	if h, err := snapshot.FileHash(version, []string{rec["hash"].(string)}); err != nil || h != doc["hash"] {
		return nil, "", &upgradeError{"/hash", check.RuleFileHash, "file hash mismatch: the file was changed after it was hashed"}
	}
	old, cur := rec, rec
	if version == snapshot.Version {
		old = maps.Clone(rec)
		delete(old, "endpoint")
	} else {
		if _, has := rec["endpoint"]; has {
			return nil, "", &upgradeError{"/snapshots/0/endpoint", check.RuleSchema, "a 1.0.0 record has no endpoint field"}
		}
		request, ok := rec["request"].(map[string]any)
		e := registry.EndpointOf100(p, request)
		if !ok || e == "" {
			return nil, "", &upgradeError{"/snapshots/0/request", check.RuleSchema, "the request is missing or its provider unknown; no endpoint can be derived"}
		}
		cur = maps.Clone(rec)
		cur["endpoint"] = string(e)
	}
	if err := snapshot.Rehash(old); err != nil {
		return nil, "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	if err := snapshot.Rehash(cur); err != nil {
		return nil, "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	oldDoc, err := snapshot.FileDocumentAt(snapshot.PreviousVersion, old)
	if err != nil {
		return nil, "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	newDoc, err := snapshot.FileDocument(cur)
	if err != nil {
		return nil, "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	out, err := snapshot.MarshalFile(newDoc)
	if err != nil {
		return nil, "", &upgradeError{"", check.RuleJSON, err.Error()}
	}
	return out, oldDoc["hash"].(string), nil
}

// UpgradeFile returns the bytes one snapshot file of provider p would have
// after `snapshot migrate --from 1.0.0 --to 1.1.0` (a file already at 1.1.0
// comes back as it is, re-encoded). The stored hashes must hold; nothing is
// written. traceforge diff uses it to compare a set at a revision from
// before the upgrade with the work tree.
func UpgradeFile(p string, data []byte) ([]byte, error) {
	out, _, uerr := upgradeFile(p, data)
	if uerr != nil {
		msg := uerr.msg
		if uerr.pointer != "" {
			msg = uerr.pointer + ": " + msg
		}
		return nil, fmt.Errorf("%s [%s]", msg, uerr.rule)
	}
	return out, nil
}

func sortedEntryFiles(m map[string]snapshot.ManifestEntry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
