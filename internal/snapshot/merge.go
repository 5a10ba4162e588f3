package snapshot

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// ErrMergeConflict: the two sides of a manifest merge changed one snapshot
// in different ways.
var ErrMergeConflict = errors.New("manifest merge conflict")

// MergeConflict is one id the three-way merge cannot decide. A nil entry is
// a side where the snapshot is absent.
type MergeConflict struct {
	ID                 string
	Base, Ours, Theirs *ManifestEntry
}

func (c MergeConflict) String() string {
	show := func(e *ManifestEntry) string {
		if e == nil {
			return "absent"
		}
		return e.Hash
	}
	what := "changed differently on both sides"
	if c.Ours == nil || c.Theirs == nil {
		what = "removed on one side, changed on the other"
	} else if c.Base == nil {
		what = "added differently on both sides"
	}
	file := ""
	for _, e := range []*ManifestEntry{c.Ours, c.Theirs, c.Base} {
		if e != nil {
			file = e.File
			break
		}
	}
	return fmt.Sprintf("%s (%s): %s — base %s, ours %s, theirs %s", file, c.ID, what, show(c.Base), show(c.Ours), show(c.Theirs))
}

// MergeError lists every conflict of a manifest merge.
type MergeError struct{ Conflicts []MergeConflict }

func (e *MergeError) Error() string {
	return fmt.Sprintf("%v: %d snapshot(s) changed on both sides", ErrMergeConflict, len(e.Conflicts))
}

func (e *MergeError) Unwrap() error { return ErrMergeConflict }

// MergeManifests merges two manifests that descend from base (nil or empty
// for none), three-way per id (DESIGN §12.5, §12.9 item 9): an entry equal
// on both sides is kept; when one side equals base, the other side wins
// (so additions and removals on either side are kept); anything else is a
// conflict and the merge returns a *MergeError. created_at is the earlier
// and updated_at the later of the two sides (RFC 3339, written as
// YYYY-MM-DDTHH:MM:SSZ). The result's entries are sorted by file; build the
// document (and its hash) with BuildManifest.
func MergeManifests(base, ours, theirs *Manifest) (*Manifest, error) {
	if base == nil {
		base = &Manifest{}
	}
	for _, side := range []struct {
		name string
		m    *Manifest
	}{{"base", base}, {"ours", ours}, {"theirs", theirs}} {
		seen := map[string]bool{}
		for i, e := range side.m.Entries {
			if seen[e.ID] {
				return nil, fmt.Errorf("%s: /snapshots/%d: id %s is listed twice", side.name, i, e.ID)
			}
			seen[e.ID] = true
			if want := RelPath(e.Provider, e.ID); e.File != want {
				return nil, fmt.Errorf("%s: /snapshots/%d/file: %q must be exactly %q", side.name, i, e.File, want)
			}
		}
	}
	b, o, t := byID(base.Entries), byID(ours.Entries), byID(theirs.Entries)
	ids := map[string]bool{}
	for _, m := range []map[string]*ManifestEntry{b, o, t} {
		for id := range m {
			ids[id] = true
		}
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	var merged []ManifestEntry
	var conflicts []MergeConflict
	for _, id := range sorted {
		be, oe, te := b[id], o[id], t[id]
		var keep *ManifestEntry
		switch {
		case sameEntry(oe, te):
			keep = oe
		case sameEntry(oe, be):
			keep = te
		case sameEntry(te, be):
			keep = oe
		default:
			conflicts = append(conflicts, MergeConflict{ID: id, Base: be, Ours: oe, Theirs: te})
			continue
		}
		if keep != nil {
			merged = append(merged, *keep)
		}
	}
	if len(conflicts) > 0 {
		return nil, &MergeError{Conflicts: conflicts}
	}
	created, err := pickTime(ours.CreatedAt, theirs.CreatedAt, false)
	if err != nil {
		return nil, fmt.Errorf("created_at: %w", err)
	}
	updated, err := pickTime(ours.UpdatedAt, theirs.UpdatedAt, true)
	if err != nil {
		return nil, fmt.Errorf("updated_at: %w", err)
	}
	SortEntries(merged)
	return &Manifest{Version: Version, CreatedAt: created, UpdatedAt: updated, Entries: merged}, nil
}

func byID(es []ManifestEntry) map[string]*ManifestEntry {
	m := make(map[string]*ManifestEntry, len(es))
	for i := range es {
		m[es[i].ID] = &es[i]
	}
	return m
}

func sameEntry(a, b *ManifestEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// pickTime returns the earlier (later when latest) of two RFC 3339 times.
func pickTime(a, b string, latest bool) (string, error) {
	ta, err := time.Parse(time.RFC3339, a)
	if err != nil {
		return "", fmt.Errorf("%q is not an RFC 3339 time", a)
	}
	tb, err := time.Parse(time.RFC3339, b)
	if err != nil {
		return "", fmt.Errorf("%q is not an RFC 3339 time", b)
	}
	if tb.Before(ta) != latest {
		ta = tb
	}
	return FormatTimestamp(ta), nil
}
