package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// TestMergeManifestAnyRFC3339Times (DESIGN §12.9 item 9): the merge driver
// reads created_at and updated_at as any RFC 3339 time — with a fraction of
// a second or an offset — and writes the merged manifest's times as
// YYYY-MM-DDTHH:MM:SSZ (created_at the earliest, updated_at the latest).
func TestMergeManifestAnyRFC3339Times(t *testing.T) {
	dir := t.TempDir()
	entry := func(id string) snapshot.ManifestEntry {
		return snapshot.ManifestEntry{ID: id, Provider: "openai", File: "openai/" + id + ".json", Hash: "sha256:" + strings.Repeat(id[:1], 64)}
	}
	write := func(name, created, updated string, es ...snapshot.ManifestEntry) string {
		doc, err := snapshot.BuildManifest(es, created, updated)
		if err != nil {
			t.Fatal(err)
		}
		data, err := snapshot.MarshalManifest(doc)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := entry("aaaaaaaaaaaa"), entry("bbbbbbbbbbbb"), entry("cccccccccccc")
	base := write("base.json", "2026-11-20T10:00:00+02:00", "2026-11-20T10:00:00.25+02:00", a)
	ours := write("ours.json", "2026-11-20T10:00:00+02:00", "2026-11-21T09:30:00.123456789-05:00", a, b)
	theirs := write("theirs.json", "2026-11-20T07:59:59.9Z", "2026-11-21T12:00:00Z", a, c)
	io, _, errOut := testStreams(t, dir)
	if code := Main([]string{"snapshot", "merge-manifest", base, ours, theirs}, io); code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	data, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	// 10:00+02:00 is 08:00Z, later than 07:59:59.9Z (written truncated to
	// the second); 09:30-05:00 is 14:30Z, the latest update.
	for _, want := range []string{`"created_at": "2026-11-20T07:59:59Z"`, `"updated_at": "2026-11-21T14:30:00Z"`,
		`"id": "aaaaaaaaaaaa"`, `"id": "bbbbbbbbbbbb"`, `"id": "cccccccccccc"`} {
		if !strings.Contains(got, want) {
			t.Errorf("merged manifest lacks %s:\n%s", want, got)
		}
	}
	// The result is a manifest traceforge itself reads.
	if _, fs := parseManifestStrict(ours, data); fs != "" {
		t.Errorf("the merged manifest is not valid: %s", fs)
	}
}

func parseManifestStrict(p string, data []byte) (any, string) {
	m, fs := check.ParseManifest(p, data, check.Options{CanMigrate: project.CanMigrate})
	if fs.Errors() > 0 {
		return nil, fs[0].Message
	}
	return m, ""
}
