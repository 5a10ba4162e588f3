package snapshot

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func entry(id, hash string) ManifestEntry {
	return ManifestEntry{ID: id, Provider: "openai", File: RelPath("openai", id), Hash: "sha256:" + strings.Repeat(hash, 64)}
}

func manifest(created, updated string, es ...ManifestEntry) *Manifest {
	return &Manifest{Version: Version, CreatedAt: created, UpdatedAt: updated, Entries: es}
}

func TestMergeManifests(t *testing.T) {
	a, b, c, d := "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd"
	base := manifest("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", entry(a, "1"), entry(b, "1"), entry(c, "1"))
	// ours: adds d, changes b; theirs: removes c, keeps b; both keep a.
	ours := manifest("2026-01-02T00:00:00Z", "2026-01-05T10:00:00Z", entry(a, "1"), entry(b, "2"), entry(c, "1"), entry(d, "1"))
	theirs := manifest("2026-01-01T00:00:00+02:00", "2026-01-04T00:00:00Z", entry(a, "1"), entry(b, "1"))
	got, err := MergeManifests(base, ours, theirs)
	if err != nil {
		t.Fatal(err)
	}
	want := manifest("2025-12-31T22:00:00Z", "2026-01-05T10:00:00Z", entry(a, "1"), entry(b, "2"), entry(d, "1"))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged = %+v\nwant %+v", got, want)
	}
	// The same change on both sides is no conflict; no base is an empty base.
	got, err = MergeManifests(nil, manifest("2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z", entry(a, "3")), manifest("2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z", entry(a, "3"), entry(b, "1")))
	if err != nil || len(got.Entries) != 2 {
		t.Fatalf("no base: %+v %v", got, err)
	}
}

func TestMergeManifestsConflicts(t *testing.T) {
	a, b, c := "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"
	base := manifest("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", entry(a, "1"), entry(b, "1"))
	ours := manifest("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", entry(a, "2"), entry(b, "2"), entry(c, "1"))
	theirs := manifest("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", entry(a, "3"), entry(c, "2"))
	_, err := MergeManifests(base, ours, theirs)
	var me *MergeError
	if !errors.As(err, &me) || !errors.Is(err, ErrMergeConflict) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, c := range me.Conflicts {
		got = append(got, c.String())
	}
	want := []string{
		"openai/aaaaaaaaaaaa.json (aaaaaaaaaaaa): changed differently on both sides — base sha256:1111111111111111111111111111111111111111111111111111111111111111, ours sha256:2222222222222222222222222222222222222222222222222222222222222222, theirs sha256:3333333333333333333333333333333333333333333333333333333333333333",
		"openai/bbbbbbbbbbbb.json (bbbbbbbbbbbb): removed on one side, changed on the other — base sha256:1111111111111111111111111111111111111111111111111111111111111111, ours sha256:2222222222222222222222222222222222222222222222222222222222222222, theirs absent",
		"openai/cccccccccccc.json (cccccccccccc): added differently on both sides — base absent, ours sha256:1111111111111111111111111111111111111111111111111111111111111111, theirs sha256:2222222222222222222222222222222222222222222222222222222222222222",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("conflicts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMergeManifestsRefusesBadInput(t *testing.T) {
	a := "aaaaaaaaaaaa"
	ok := manifest("2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z", entry(a, "1"))
	dup := manifest("2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z", entry(a, "1"), entry(a, "2"))
	if _, err := MergeManifests(nil, ok, dup); err == nil || !strings.Contains(err.Error(), "theirs: /snapshots/1: id aaaaaaaaaaaa is listed twice") {
		t.Errorf("duplicate: %v", err)
	}
	badFile := manifest("2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z", ManifestEntry{ID: a, Provider: "openai", File: "anthropic/" + a + ".json"})
	if _, err := MergeManifests(badFile, ok, ok); err == nil || !strings.Contains(err.Error(), "base: /snapshots/0/file") {
		t.Errorf("bad file: %v", err)
	}
	badTime := manifest("yesterday", "2026-01-02T00:00:00Z", entry(a, "1"))
	if _, err := MergeManifests(nil, ok, badTime); err == nil || !strings.Contains(err.Error(), `created_at: "yesterday" is not an RFC 3339 time`) {
		t.Errorf("bad time: %v", err)
	}
}
