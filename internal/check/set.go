package check

import (
	"errors"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// SetResult is the outcome of checking a whole snapshot folder.
type SetResult struct {
	Snapshots []*Snapshot // every schema-valid snapshot file, sorted by Rel
	Findings  finding.Findings
	Manifest  *snapshot.Manifest // nil when missing or invalid
	Files     int                // snapshot files found
	Rels      []string           // every snapshot file checked (<provider>/<id>.json)
	// Keys is the key context the snapshots were keyed under (the config's
	// declared key normalizers; nil = none): whoever looks requests up in
	// the set keys them the same way.
	Keys *provider.KeyContext
}

// Valid reports whether no error finding was made.
func (r *SetResult) Valid() bool { return r.Findings.Errors() == 0 }

// ByKey indexes the valid snapshots by full request key.
func (r *SetResult) ByKey() map[string]*Snapshot {
	m := make(map[string]*Snapshot, len(r.Snapshots))
	for _, s := range r.Snapshots {
		if s.Errors == 0 {
			m[s.Key] = s
		}
	}
	return m
}

// Filter keeps only files for which keep(rel) is true (sharding).
type Filter func(rel string) bool

// maxReadBuffer is the largest read buffer a CheckSet worker keeps for the
// next file (a snapshot is usually a few KB; the limit is 64 MiB).
const maxReadBuffer = 1 << 20

// CheckSet runs every static check over the folder of st: each file, the
// manifest, manifest ↔ files, and id collisions. Findings name files
// relative to the folder.
func CheckSet(st *snapshot.Store, opts Options, keep Filter) (*SetResult, error) {
	// The manifest is read and parsed on a CPU of its own, while the folder
	// is scanned and GOMAXPROCS-1 file workers run; the others start when
	// it is done. Its decoded document (a 20 MB manifest at 100k snapshots
	// decodes to ~100 MB) is then garbage again within a second. Parsed
	// next to all the file workers, it got a ninth of a CPU and stayed live
	// for seconds, so that every collection of that time marked it (GC was
	// 17% of the CPU of a 100k verify). It is used only if the scan finds a
	// real manifest.json.
	var parsed parsedManifest
	parsedDone := make(chan struct{})
	go func() {
		defer close(parsedDone)
		parsed = readManifest(st, opts)
	}()
	entries, err := st.Scan()
	if err != nil {
		<-parsedDone
		return nil, err
	}
	res := &SetResult{Keys: opts.Config.KeyContext()}
	var files []snapshot.Entry
	var haveManifest, haveLegacy bool
	linked := map[string]bool{}
	for _, e := range entries {
		switch e.Kind {
		case snapshot.EntrySnapshot:
			if keep != nil && !keep(e.Rel) {
				continue
			}
			if e.Symlink {
				res.Findings = append(res.Findings, finding.Finding{File: e.Rel, Rule: RuleUnsafeFile, Severity: finding.Error,
					Message: "is a symbolic link; snapshot files are never followed through links", Fix: "replace the link with the real file (git checkout) or delete it"})
				linked[e.Rel] = true
				continue
			}
			files = append(files, e)
		case snapshot.EntryManifest:
			haveManifest = !e.Symlink
			if e.Symlink {
				res.Findings = append(res.Findings, finding.Finding{File: e.Rel, Rule: RuleUnsafeFile, Severity: finding.Error,
					Message: "is a symbolic link", Fix: "replace it with a real file: traceforge snapshot reindex"})
			}
		case snapshot.EntryLegacy:
			haveLegacy = true
		case snapshot.EntryUnexpected:
			res.Findings = append(res.Findings, finding.Finding{File: e.Rel, Rule: RuleUnexpectedFile, Severity: finding.Error,
				Message: "is not part of a snapshot set (expected manifest.json, " + strings.Join(providerFiles, ", ") + ")",
				Fix:     "move it out of the snapshot folder"})
		}
	}
	res.Files = len(files)
	for _, e := range files {
		res.Rels = append(res.Rels, e.Rel)
	}
	if haveLegacy {
		res.Findings = append(res.Findings, legacyFinding(st, snapshot.LegacyName, haveManifest || len(files) > 0, opts))
	}

	// Check files concurrently; results keep the sorted order.
	type out struct {
		s  *Snapshot
		fs finding.Findings
	}
	results := make([]out, len(files))
	var wg sync.WaitGroup
	// Workers take the next file from a shared counter (no hand-off through
	// a channel, which costs a scheduling round-trip per file); there are
	// more of them than CPUs so that one blocked in a read leaves work for
	// the CPU it was using.
	var next atomic.Int64
	// Until the manifest is parsed, only GOMAXPROCS-1 workers run, so that
	// it has a CPU of its own and is done quickly.
	workers := min(4*runtime.GOMAXPROCS(0), max(len(files), 1))
	early := runtime.GOMAXPROCS(0) - 1
	for w := 0; w < workers; w++ {
		if w == early {
			<-parsedDone
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker reads every file into one buffer: nothing checked
			// aliases it (Decode copies every string and number out).
			var buf []byte
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				e := files[i]
				data, err := st.ReadRelInto(e.Rel, snapshot.MaxSnapshotFileSize, buf)
				if err != nil {
					results[i] = out{fs: finding.Findings{readFinding(e.Rel, err)}}
					continue
				}
				if cap(data) <= maxReadBuffer {
					buf = data[:0]
				}
				s, fs := CheckBytes(e.Rel, data, opts)
				switch {
				case s != nil && opts.Slim:
					s = s.lean()
				case s != nil && opts.Trim != nil:
					s = opts.Trim(s)
				}
				results[i] = out{s, fs}
			}
		}()
	}
	wg.Wait()
	<-parsedDone // (when there are fewer workers than early)
	if !haveManifest {
		parsed = parsedManifest{}
	}
	fileHash := map[string]string{}
	for rel := range linked {
		fileHash[rel] = "" // exists (refused above); not "missing"
	}
	for i, r := range results {
		res.Findings = append(res.Findings, r.fs...)
		if r.s != nil {
			res.Snapshots = append(res.Snapshots, r.s)
			fileHash[files[i].Rel] = r.s.FileHash
		} else {
			fileHash[files[i].Rel] = ""
		}
	}

	// id collisions across provider folders.
	byID := map[string][]*Snapshot{}
	for _, s := range res.Snapshots {
		byID[s.ID] = append(byID[s.ID], s)
	}
	for id, ss := range byID {
		if len(ss) > 1 && ss[0].Key != ss[1].Key {
			res.Findings = append(res.Findings, finding.Finding{File: ss[1].Rel, Pointer: "/snapshots/0/id", Rule: RuleCollision, Severity: finding.Error,
				Message: fmt.Sprintf("id %s is shared by %s (key %s) and %s (key %s)", id, ss[0].Rel, ss[0].Key, ss[1].Rel, ss[1].Key),
				Fix:     "a 12-character id collision: change one request slightly (e.g. its seed) and re-record it"})
		}
	}

	res.Findings = append(res.Findings, chainFindings(res.Snapshots)...)
	res.Findings = append(res.Findings, checkManifest(res, haveManifest, parsed, fileHash, keep)...)
	sort.SliceStable(res.Findings, func(i, j int) bool { return res.Findings[i].File < res.Findings[j].File })
	return res, nil
}

func readFinding(file string, err error) finding.Finding {
	f := finding.Finding{File: file, Rule: RuleUnsafeFile, Severity: finding.Error, Message: err.Error()}
	switch {
	case errors.Is(err, snapshot.ErrSymlink):
		f.Message = "is (or lies below) a symbolic link; it is not followed"
		f.Fix = "replace the link with the real file or delete it"
	case errors.Is(err, snapshot.ErrTooLarge):
		f.Message = "is larger than the 64 MiB snapshot limit and was not read"
		f.Fix = "delete it and re-record; a real snapshot is far smaller"
	case errors.Is(err, snapshot.ErrNotFile):
		f.Message = "is not a regular file"
		f.Fix = "remove it from the snapshot folder"
	default:
		f.Fix = "check the file's permissions"
	}
	return f
}

// legacyFinding reports snapshots.json: next to any 1.0.0 file or manifest
// it is an interrupted migration, alone it is a legacy set.
func legacyFinding(st *snapshot.Store, file string, haveNew bool, opts Options) finding.Finding {
	if haveNew {
		return finding.Finding{File: file, Rule: RuleMigration, Severity: finding.Error,
			Message: "unfinished migration: the 0.9.0 file is still next to 1.0.0 snapshots",
			Fix:     "rerun: traceforge snapshot migrate --from 0.9.0 --to " + snapshot.Version}
	}
	data, err := st.ReadRel(snapshot.LegacyName, snapshot.MaxManifestSize)
	if err == nil {
		if v, err := snapshot.Decode(data); err == nil {
			if m, ok := v.(map[string]any); ok {
				if ver, ok := m["version"].(string); ok {
					if f := VersionFinding(file, "/version", ver, opts); f != nil {
						return *f
					}
				}
			}
		}
	}
	return finding.Finding{File: file, Rule: RuleUnexpectedFile, Severity: finding.Error,
		Message: "snapshots.json is not a snapshot set this traceforge understands",
		Fix:     "re-record all snapshots"}
}

// parsedManifest is the manifest read and parsed on its own (ParseManifest).
type parsedManifest struct {
	m  *snapshot.Manifest
	fs finding.Findings
}

// readManifest reads and parses the set's manifest.
func readManifest(st *snapshot.Store, opts Options) parsedManifest {
	data, err := st.ReadRel(snapshot.ManifestName, snapshot.MaxManifestSize)
	if err != nil {
		return parsedManifest{fs: finding.Findings{readFinding(snapshot.ManifestName, err)}}
	}
	m, fs := ParseManifest(snapshot.ManifestName, data, opts)
	return parsedManifest{m, fs}
}

// checkManifest checks the parsed manifest against the files (fileHash:
// rel → the file's stored hash, "" when the file is not valid).
func checkManifest(res *SetResult, have bool, parsed parsedManifest, fileHash map[string]string, keep Filter) finding.Findings {
	if !have {
		if res.Files == 0 && len(res.Findings) > 0 {
			return nil // e.g. a legacy set: the version finding says it all
		}
		return finding.Findings{{File: snapshot.ManifestName, Rule: RuleManifestMissing, Severity: finding.Error,
			Message: "manifest.json is missing", Fix: "run: traceforge snapshot reindex"}}
	}
	m, fs := parsed.m, parsed.fs
	if m == nil {
		return fs
	}
	res.Manifest = m
	seenID := map[string]int{}
	inManifest := map[string]bool{}
	for i, e := range m.Entries {
		ptr := fmt.Sprintf("/snapshots/%d", i)
		if j, dup := seenID[e.ID]; dup {
			fs = append(fs, finding.Finding{File: snapshot.ManifestName, Pointer: ptr + "/id", Rule: RuleManifestEntry, Severity: finding.Error,
				Message: fmt.Sprintf("id %s is listed twice (entries %d and %d)", e.ID, j, i), Fix: "run: traceforge snapshot reindex"})
		}
		seenID[e.ID] = i
		if want := snapshot.RelPath(e.Provider, e.ID); e.File != want {
			fs = append(fs, finding.Finding{File: snapshot.ManifestName, Pointer: ptr + "/file", Rule: RuleManifestEntry, Severity: finding.Error,
				Message: fmt.Sprintf("entry file %q must be exactly %q", e.File, want), Fix: "run: traceforge snapshot reindex"})
			continue
		}
		if keep != nil && !keep(e.File) {
			continue
		}
		inManifest[e.File] = true
		h, exists := fileHash[e.File]
		switch {
		case !exists:
			fs = append(fs, finding.Finding{File: e.File, Rule: RuleMissingFile, Severity: finding.Error,
				Message: fmt.Sprintf("listed in manifest.json (entry %d) but the file does not exist", i),
				Fix:     "restore it from Git, re-record the call, or drop it from the manifest with: traceforge snapshot reindex"})
		case h != "" && h != e.Hash:
			fs = append(fs, finding.Finding{File: snapshot.ManifestName, Pointer: ptr + "/hash", Rule: RuleManifestEntry, Severity: finding.Error,
				Message: fmt.Sprintf("entry hash %s does not match %s's hash %s", e.Hash, e.File, h),
				Fix:     "if the file is right, run: traceforge snapshot reindex"})
		}
	}
	var extra []string
	for rel := range fileHash {
		if !inManifest[rel] {
			extra = append(extra, rel)
		}
	}
	sort.Strings(extra)
	for _, rel := range extra {
		fs = append(fs, finding.Finding{File: rel, Rule: RuleNotInManifest, Severity: finding.Error,
			Message: "file is not listed in manifest.json",
			Fix:     "if it belongs to the set, run: traceforge snapshot reindex; otherwise delete it"})
	}
	return fs
}

// chainFindings checks Responses chains across the set (DESIGN §12.8, §12.9
// item 5): a chained record's parent, when present, is one turn before it
// (else an error) and recorded the response id the child names (else a
// note: the parent was kept unchanged on a re-record that minted new ids);
// a missing parent is only reported.
func chainFindings(snaps []*Snapshot) finding.Findings {
	byID := map[string]*Snapshot{}
	for _, s := range snaps {
		if old, ok := byID[s.ID]; !ok || s.Rel < old.Rel {
			byID[s.ID] = s
		}
	}
	var fs finding.Findings
	for _, s := range snaps {
		if s.ChainedFrom == "" {
			continue
		}
		const ptr = "/snapshots/0/lineage/parent_id"
		parent := byID[s.ParentID]
		switch {
		case parent == nil:
			fs = append(fs, finding.Finding{File: s.Rel, Pointer: ptr, Rule: RuleLineage, Severity: finding.Note,
				Message: fmt.Sprintf("the parent snapshot %s of this chained call (previous_response_id %s) is not in the set", s.ParentID, s.ChainedFrom)})
		case max(parent.Turn, 1)+1 != s.Turn:
			fs = append(fs, finding.Finding{File: s.Rel, Pointer: "/snapshots/0/lineage/turn", Rule: RuleLineage, Severity: finding.Error,
				Message: fmt.Sprintf("lineage turn is %d, but the parent %s is turn %d", s.Turn, parent.Rel, max(parent.Turn, 1)),
				Fix:     "re-record the conversation in one run"})
		case parent.ResponseID != s.ChainedFrom:
			fs = append(fs, finding.Finding{File: s.Rel, Pointer: "/snapshots/0/request/previous_response_id", Rule: RuleLineage, Severity: finding.Note,
				Message: fmt.Sprintf("previous_response_id %s is not the id %s recorded in the parent %s (the parent was kept unchanged on a re-record); replay answers the parent with %s", s.ChainedFrom, parent.ResponseID, parent.Rel, parent.ResponseID)})
		}
	}
	return fs
}

// providerFiles names the files a provider folder holds, in provider order:
// "openai/<id>.json", ….
var providerFiles = func() []string {
	var out []string
	for _, d := range registry.Providers() {
		out = append(out, string(d.Name)+"/<id>.json")
	}
	return out
}()
