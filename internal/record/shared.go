package record

import (
	"fmt"
	"sort"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// This file is the LockPerCommit mode: the set is shared with other
// recorders (other processes), so every commit takes the set's lock, checks
// the folder as it is now, writes the snapshot and merges the manifest on
// disk before releasing it (DESIGN §11 "Go transport").

// collisionError: the id is taken on disk by a different request, written
// by another recorder since this one read the set.
type collisionError struct {
	rel, key string
}

func (e *collisionError) Error() string {
	return fmt.Sprintf("id collision with %s (key %s)", e.rel, e.key)
}

// writeShared writes one snapshot file and merges its manifest entry under
// the set's lock. A manifest that cannot be written is retried at the next
// commit and at Finish (the file itself is written).
func (r *Recorder) writeShared(e snapshot.ManifestEntry, key string, data []byte) error {
	unlock, err := r.store.LockWait(r.lockTimeout())
	if err != nil {
		return fmt.Errorf("cannot lock %s: %w", r.display, err)
	}
	defer unlock()
	for _, p := range snapshot.Providers {
		rel := snapshot.RelPath(p, e.ID)
		b, err := r.store.ReadRel(rel, snapshot.MaxSnapshotFileSize)
		if err != nil {
			continue // absent (or unreadable: verify reports it)
		}
		if s, _ := check.CheckBytes(rel, b, r.cfg.Check); s != nil && s.Key != key {
			return &collisionError{rel: rel, key: s.Key}
		}
	}
	if err := r.store.WriteAtomic(e.File, data); err != nil {
		return err
	}
	r.mu.Lock()
	r.pending[e.File] = e
	r.mu.Unlock()
	r.mergeManifest()
	return nil
}

// flushShared merges the pending entries into the manifest on disk, under
// the lock; with force also when the set read at New needs its manifest
// completed.
func (r *Recorder) flushShared(force bool) error {
	r.mu.Lock()
	need := len(r.pending) > 0 || (force && r.repair)
	r.mu.Unlock()
	if !need {
		r.mmu.Lock()
		defer r.mmu.Unlock()
		return r.manifestErr
	}
	unlock, err := r.store.LockWait(r.lockTimeout())
	if err != nil {
		err = fmt.Errorf("cannot lock %s: %w", r.display, err)
		r.mmu.Lock()
		r.manifestErr = err
		r.mmu.Unlock()
		return err
	}
	defer unlock()
	return r.mergeManifest()
}

// mergeManifest rewrites the manifest as the one on disk plus what this
// recorder knows: the entries it wrote (pending) and the valid files it read
// at New. Where the manifest and this recorder disagree about a file that
// another recorder may have rewritten since, the file on disk decides.
// Nothing is removed. The lock is held.
func (r *Recorder) mergeManifest() error {
	r.mmu.Lock()
	defer r.mmu.Unlock()
	disk := r.readManifest()
	merged := map[string]snapshot.ManifestEntry{}
	if disk != nil {
		for _, e := range disk.Entries {
			merged[e.File] = e
		}
	}
	r.mu.Lock()
	known := make([]snapshot.ManifestEntry, 0, len(r.entries))
	for _, e := range r.entries {
		known = append(known, e)
	}
	pending := make([]snapshot.ManifestEntry, 0, len(r.pending))
	for _, e := range r.pending {
		pending = append(pending, e)
	}
	r.mu.Unlock()
	for _, e := range known {
		if m, ok := merged[e.File]; ok && m == e {
			continue
		}
		if h, ok := r.hashOnDisk(e.File); ok {
			e.Hash = h
			merged[e.File] = e
		}
	}
	for _, e := range pending {
		merged[e.File] = e // written under this lock hold or an earlier one of ours
	}
	entries := make([]snapshot.ManifestEntry, 0, len(merged))
	for _, e := range merged {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].File < entries[j].File })
	if _, err := r.store.WriteManifest(entries, disk, r.now()); err != nil {
		r.manifestErr = err
		r.logf("manifest: %v", err)
		return err
	}
	r.manifestErr = nil
	r.mu.Lock()
	for _, e := range pending {
		if r.pending[e.File] == e {
			delete(r.pending, e.File)
		}
	}
	r.repair = false
	r.mu.Unlock()
	return nil
}

// readManifest reads the manifest on disk; nil when it is missing or
// invalid (it is then rebuilt from what this recorder knows).
func (r *Recorder) readManifest() *snapshot.Manifest {
	b, err := r.store.ReadRel(snapshot.ManifestName, snapshot.MaxManifestSize)
	if err != nil {
		return nil
	}
	v, err := snapshot.Decode(b)
	if err != nil || len(schema.ValidateManifest(v)) > 0 {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return snapshot.ManifestFromValue(m)
}

// hashOnDisk returns the combined hash stored in a snapshot file of the set.
func (r *Recorder) hashOnDisk(rel string) (string, bool) {
	if _, _, ok := snapshot.ValidRelPath(rel); !ok {
		return "", false
	}
	b, err := r.store.ReadRel(rel, snapshot.MaxSnapshotFileSize)
	if err != nil {
		return "", false
	}
	v, err := snapshot.Decode(b)
	if err != nil {
		return "", false
	}
	m, _ := v.(map[string]any)
	h, ok := m["hash"].(string)
	return h, ok && h != ""
}
