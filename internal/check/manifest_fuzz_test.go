package check

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// FuzzParseManifestMerge: manifest bytes never panic the parser, and a
// manifest it accepts merges with itself into the same entries, whose
// rebuilt document parses back without findings.
func FuzzParseManifestMerge(f *testing.F) {
	doc, _ := snapshot.BuildManifest([]snapshot.ManifestEntry{{ID: "aaaaaaaaaaaa", Provider: "openai", File: "openai/aaaaaaaaaaaa.json", Hash: "sha256:" + strings.Repeat("1", 64)}},
		"2026-01-09T10:30:00Z", "2026-01-09T10:30:00Z")
	good, _ := snapshot.MarshalManifest(doc)
	for _, s := range []string{string(good), `{}`, `{"version":"0.9.0"}`, `[`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, fs := ParseManifest("manifest.json", data, Options{})
		if m == nil || fs.Errors() > 0 {
			return
		}
		merged, err := snapshot.MergeManifests(m, m, m)
		if err != nil {
			return // duplicate ids, bad file names or times are refused, not merged
		}
		if !snapshot.SameEntries(merged.Entries, m.Entries) {
			t.Fatalf("self-merge changed the entries: %+v → %+v", m.Entries, merged.Entries)
		}
		doc, err := snapshot.BuildManifest(merged.Entries, merged.CreatedAt, merged.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		out, err := snapshot.MarshalManifest(doc)
		if err != nil {
			t.Fatal(err)
		}
		if m2, fs := ParseManifest("manifest.json", out, Options{}); m2 == nil || fs.Errors() > 0 {
			t.Fatalf("merged manifest does not parse back: %v\n%s", fs, out)
		}
	})
}

// FuzzFailOn: every class the parser accepts is a known class.
func FuzzFailOn(f *testing.F) {
	f.Add(`{"fail_on":["text","whitespace"]}`)
	f.Add(`{"fail_on":["nope"]}`)
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseConfig([]byte(s))
		if err != nil {
			return
		}
		for _, c := range cfg.FailClasses() {
			if _, err := change.ParseClass(string(c)); err != nil {
				t.Fatalf("accepted unknown class %q", c)
			}
		}
	})
}
