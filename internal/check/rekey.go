package check

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"sort"
	"time"

	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/finding"
	pv "github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ErrRekeyRefused means `reindex --rekey` wrote nothing: the set has
// problems rekeying cannot fix, or two snapshots would collapse onto one
// key with different answers. RekeyResult.Refused says which.
var ErrRekeyRefused = errors.New("rekey refused; nothing was written")

// RekeyMove is one snapshot whose id (or key_normalizers or lineage)
// changes under the current config.
type RekeyMove struct {
	From, To string // <provider>/<id>.json before and after (equal when only the record changes)
	// Dropped is true when the snapshot collapsed onto another one with the
	// same answer and is removed (the kept one is To).
	Dropped bool
}

// RekeyResult says what a rekey did (or would refuse).
type RekeyResult struct {
	Moves   []RekeyMove
	Refused finding.Findings // why nothing was written
	Reindex *ReindexResult   // the manifest rewrite after the moves
}

// rekeyable are the findings rekey repairs: ids and key_normalizers made
// under another config, the lineage that follows from them, and the
// manifest that names the old files.
var rekeyable = map[string]bool{RuleRekey: true, RuleLineage: true, RuleCollision: true,
	RuleManifestHash: true, RuleManifestEntry: true, RuleMissingFile: true, RuleNotInManifest: true, RuleManifestMissing: true}

// Rekey recomputes every snapshot's id, key_normalizers, lineage and hashes
// under the current config (DESIGN §12.3, §12.9 item 6), in increasing turn
// order (a child's key may depend on its parent's new id), renames the
// files and rewrites the manifest. Snapshots that collapse onto one key are
// merged when their answers are equal (provider.Equal; the earliest
// timestamp, then the smallest old id, is kept); otherwise, or when the set
// has a problem rekeying cannot fix, nothing is written and the error wraps
// ErrRekeyRefused. The caller holds the set's lock.
func Rekey(st *snapshot.Store, opts Options, now time.Time) (*RekeyResult, error) {
	opts.Slim, opts.Trim = false, nil
	set, err := CheckSet(st, opts, nil)
	if err != nil {
		return nil, err
	}
	res := &RekeyResult{}
	for _, f := range set.Findings {
		if f.Severity == finding.Error && !rekeyable[f.Rule] {
			res.Refused = append(res.Refused, f)
		}
	}
	if len(res.Refused) > 0 {
		return res, fmt.Errorf("%w: %d problem(s) rekeying cannot fix", ErrRekeyRefused, len(res.Refused))
	}

	snaps := append([]*Snapshot(nil), set.Snapshots...)
	turn := func(s *Snapshot) int { return max(s.Record.Turn, 1) }
	sort.SliceStable(snaps, func(i, j int) bool {
		if ti, tj := turn(snaps[i]), turn(snaps[j]); ti != tj {
			return ti < tj
		}
		return snaps[i].Rel < snaps[j].Rel
	})
	type built struct {
		s   *Snapshot
		key string
		rec map[string]any
	}
	newID := map[string]string{} // old id → new id (chains resolve through it)
	byKey := map[string]*built{}
	var order []*built
	norm := opts.Config.Normalizer()
	for _, s := range snaps {
		rec := s.Record
		parent := rec.ParentID
		if id, ok := newID[parent]; ok {
			parent = id
		}
		kc := pv.WithNormalizer(pv.RecordKeyContext(parent, rec.Turn), norm)
		e := pv.Endpoint(rec.Endpoint)
		// Members set by request defaults follow the current "defaults"
		// (DESIGN §13.2): the request the application's call now becomes.
		request, defaulted, restated := defaults.Restate(opts.Config.Defaults, e, rec.Request, defaults.AppliedOf(rec.Raw))
		if !restated {
			request = rec.Request
		}
		key, applied, err := registry.Key(s.Provider, e, request, rec.RequestHeaders, kc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Rel, err)
		}
		b := &built{s: s, key: key, rec: maps.Clone(rec.Raw)}
		if restated {
			b.rec["request"] = request
			delete(b.rec, defaults.Field)
			if len(defaulted) > 0 {
				b.rec[defaults.Field] = anyList(defaulted)
			}
		}
		b.rec["id"] = snapshot.IDOf(key)
		delete(b.rec, "key_normalizers")
		if len(applied) > 0 {
			names := make([]any, len(applied))
			for i, n := range applied {
				names[i] = n
			}
			b.rec["key_normalizers"] = names
		}
		delete(b.rec, "lineage")
		if pid, t, ok, err := registry.Lineage(s.Provider, e, request, rec.RequestHeaders, kc); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Rel, err)
		} else if ok {
			b.rec["lineage"] = map[string]any{"parent_id": pid, "turn": int64(t)}
		}
		if err := snapshot.Rehash(b.rec); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Rel, err)
		}
		if restated {
			// A request the defaults no longer complete is not written.
			if fs := rekeyedFindings(b.rec, s, opts); len(fs) > 0 {
				res.Refused = append(res.Refused, fs...)
				continue
			}
		}
		newID[rec.ID] = snapshot.IDOf(key)
		if prev, ok := byKey[key]; ok {
			if !pv.Equal(prev.s.Record.Response.Fields, rec.Response.Fields) {
				res.Refused = append(res.Refused, finding.Finding{File: s.Rel, Pointer: "/snapshots/0/id", Rule: RuleRekey, Severity: finding.Error,
					Message: fmt.Sprintf("collapses with %s onto id %s under the current key normalizers, with a different answer (%s)", prev.s.Rel, snapshot.IDOf(key), firstDiff(prev.s, s)),
					Fix:     "narrow the normalize rules in " + ConfigName + " so the two requests stay apart, or delete the snapshot that is wrong"})
				continue
			}
			keep, drop := prev, b
			if rec.Timestamp < prev.s.Record.Timestamp || rec.Timestamp == prev.s.Record.Timestamp && rec.ID < prev.s.Record.ID {
				keep, drop = b, prev
				byKey[key] = b
			}
			res.Moves = append(res.Moves, RekeyMove{From: drop.s.Rel, To: snapshot.RelPath(keep.s.Provider, snapshot.IDOf(key)), Dropped: true})
			continue
		}
		byKey[key] = b
		order = append(order, b)
	}
	// Two different keys sharing a 12-character id cannot both be written.
	ids := map[string]*built{}
	for _, b := range order {
		b = byKey[b.key]
		rel := snapshot.RelPath(b.s.Provider, snapshot.IDOf(b.key))
		if other, ok := ids[rel]; ok && other.key != b.key {
			res.Refused = append(res.Refused, finding.Finding{File: b.s.Rel, Pointer: "/snapshots/0/id", Rule: RuleCollision, Severity: finding.Error,
				Message: fmt.Sprintf("its new id %s is also the id of %s (keys %s and %s)", snapshot.IDOf(b.key), other.s.Rel, other.key, b.key),
				Fix:     "change one request slightly (e.g. its seed) and re-record it"})
		}
		ids[rel] = b
	}
	if len(res.Refused) > 0 {
		return res, fmt.Errorf("%w: %d snapshot(s) cannot be rekeyed", ErrRekeyRefused, len(res.Refused))
	}

	// Write every new file first, then remove the old ones, then the
	// manifest (the commit point): an interrupted rekey leaves files that a
	// rerun collapses again.
	keepRel := map[string]bool{}
	var writes []*built
	for _, b := range order {
		b = byKey[b.key]
		rel := snapshot.RelPath(b.s.Provider, snapshot.IDOf(b.key))
		keepRel[rel] = true
		if h, _ := b.rec["hash"].(string); rel == b.s.Rel && h == b.s.Record.Hash {
			continue // nothing changes
		}
		res.Moves = append(res.Moves, RekeyMove{From: b.s.Rel, To: rel})
		writes = append(writes, b)
	}
	for _, b := range writes {
		doc, err := snapshot.FileDocument(b.rec)
		if err != nil {
			return nil, err
		}
		data, err := snapshot.MarshalFile(doc)
		if err != nil {
			return nil, err
		}
		if err := st.WriteAtomic(snapshot.RelPath(b.s.Provider, snapshot.IDOf(b.key)), data); err != nil {
			return nil, err
		}
	}
	for _, s := range set.Snapshots {
		if !keepRel[s.Rel] {
			if err := st.Remove(s.Rel); err != nil {
				return nil, fmt.Errorf("remove %s: %w", path.Clean(s.Rel), err)
			}
		}
	}
	sort.Slice(res.Moves, func(i, j int) bool { return res.Moves[i].From < res.Moves[j].From })
	res.Reindex, err = Reindex(st, opts, now)
	return res, err
}

// firstDiff names the first difference of two snapshots' answers.
func firstDiff(a, b *Snapshot) string {
	if d := pv.Diff(a.Record.Response.Fields, b.Record.Response.Fields); len(d) > 0 {
		return d[0]
	}
	return "different answers"
}
