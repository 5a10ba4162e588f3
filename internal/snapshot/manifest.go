package snapshot

import (
	"bytes"
	"sort"
	"time"
)

// ManifestEntry is one line of the manifest.
type ManifestEntry struct {
	ID       string
	Provider string
	File     string
	Hash     string // the file's combined hash
}

// Manifest is the typed view of manifest.json.
type Manifest struct {
	Version   string
	CreatedAt string
	UpdatedAt string
	Entries   []ManifestEntry
	Hash      string
}

// ManifestFromValue reads a schema-valid manifest value.
func ManifestFromValue(v map[string]any) *Manifest {
	m := &Manifest{}
	m.Version, _ = v["version"].(string)
	m.CreatedAt, _ = v["created_at"].(string)
	m.UpdatedAt, _ = v["updated_at"].(string)
	m.Hash, _ = v["hash"].(string)
	list, _ := v["snapshots"].([]any)
	for _, e := range list {
		em, _ := e.(map[string]any)
		var me ManifestEntry
		me.ID, _ = em["id"].(string)
		me.Provider, _ = em["provider"].(string)
		me.File, _ = em["file"].(string)
		me.Hash, _ = em["hash"].(string)
		m.Entries = append(m.Entries, me)
	}
	return m
}

// SortEntries orders entries by file, as the manifest stores them.
func SortEntries(es []ManifestEntry) {
	sort.Slice(es, func(i, j int) bool { return es[i].File < es[j].File })
}

// SameEntries reports whether two entry lists hold the same (id, provider, file, hash) set.
func SameEntries(a, b []ManifestEntry) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]ManifestEntry(nil), a...)
	y := append([]ManifestEntry(nil), b...)
	SortEntries(x)
	SortEntries(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// BuildManifest returns the manifest document (with its hash) for entries.
func BuildManifest(entries []ManifestEntry, createdAt, updatedAt string) (map[string]any, error) {
	return BuildManifestAt(Version, entries, createdAt, updatedAt)
}

// BuildManifestAt is BuildManifest for format version (migration writes
// intermediate versions).
func BuildManifestAt(version string, entries []ManifestEntry, createdAt, updatedAt string) (map[string]any, error) {
	es := append([]ManifestEntry(nil), entries...)
	SortEntries(es)
	list := make([]any, 0, len(es))
	for _, e := range es {
		list = append(list, map[string]any{"id": e.ID, "provider": e.Provider, "file": e.File, "hash": e.Hash})
	}
	doc := map[string]any{
		"version":    version,
		"created_at": createdAt,
		"updated_at": updatedAt,
		"snapshots":  list,
	}
	h, err := DocumentHash(doc)
	if err != nil {
		return nil, err
	}
	doc["hash"] = h
	return doc, nil
}

// WriteManifest writes the manifest for entries, keeping created_at from old
// (when old is non-nil) and changing updated_at only when the entry list
// changed, so an unchanged set is rewritten byte for byte. It reports whether
// the file changed.
func (s *Store) WriteManifest(entries []ManifestEntry, old *Manifest, now time.Time) (bool, error) {
	created, updated := FormatTimestamp(now), FormatTimestamp(now)
	if old != nil {
		if old.CreatedAt != "" {
			created = old.CreatedAt
		}
		if SameEntries(old.Entries, entries) && old.UpdatedAt != "" {
			updated = old.UpdatedAt
		}
	}
	doc, err := BuildManifest(entries, created, updated)
	if err != nil {
		return false, err
	}
	data, err := MarshalManifest(doc)
	if err != nil {
		return false, err
	}
	if cur, err := s.ReadRel(ManifestName, MaxManifestSize); err == nil && bytes.Equal(cur, data) {
		return false, nil
	}
	return true, s.WriteAtomic(ManifestName, data)
}
