package check

import (
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ReindexResult says what a reindex did.
type ReindexResult struct {
	Entries []snapshot.ManifestEntry
	Skipped finding.Findings // files left out, with why
	Changed bool             // manifest.json was rewritten
}

// ErrOtherVersion: reindex met files or a manifest of another format
// version; it writes nothing (a manifest of the current version over an
// older set would hide it from snapshot migrate).
var ErrOtherVersion = errors.New("the set is at another format version")

// Reindex rebuilds manifest.json from the snapshot files that pass every
// per-file check. created_at is kept from a readable old manifest, else the
// earliest record timestamp. The caller holds the set's lock. A set at
// another format version is refused (an error wrapping ErrOtherVersion that
// carries the §8 text) with nothing written.
func Reindex(st *snapshot.Store, opts Options, now time.Time) (*ReindexResult, error) {
	set, err := CheckSet(st, opts, nil)
	if err != nil {
		return nil, err
	}
	for _, f := range set.Findings {
		if f.Rule == RuleVersion && f.Severity == finding.Error {
			return nil, fmt.Errorf("%w: %s: %s", ErrOtherVersion, f.File, f.Verbatim)
		}
	}
	bad := map[string]bool{}
	res := &ReindexResult{}
	for _, f := range set.Findings {
		if f.Severity != finding.Error {
			continue
		}
		switch f.Rule {
		case RuleManifestHash, RuleManifestEntry, RuleMissingFile, RuleNotInManifest, RuleManifestMissing:
			continue // what reindex repairs
		}
		if path.Base(f.File) == snapshot.ManifestName {
			continue
		}
		bad[f.File] = true
		res.Skipped = append(res.Skipped, f)
	}
	earliest := ""
	for _, s := range set.Snapshots {
		if bad[s.Rel] {
			continue
		}
		res.Entries = append(res.Entries, snapshot.ManifestEntry{ID: s.Record.ID, Provider: s.Provider, File: s.Rel, Hash: s.FileHash})
		if earliest == "" || s.Record.Timestamp < earliest {
			earliest = s.Record.Timestamp
		}
	}
	old := set.Manifest
	if old == nil {
		old = &snapshot.Manifest{CreatedAt: earliest}
		if earliest == "" {
			old.CreatedAt = snapshot.FormatTimestamp(now)
		}
	}
	res.Changed, err = st.WriteManifest(res.Entries, old, now)
	return res, err
}
