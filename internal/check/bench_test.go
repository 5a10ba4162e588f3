package check_test

import (
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// BenchmarkCheckBytes: every static check of one realistic file (bench/gen),
// per provider: decode, schema, secret scan, key, lineage, hashes, policy.
func BenchmarkCheckBytes(b *testing.B) {
	for _, i := range []int{0, 1} {
		it := gen.Item(i)
		doc, id, err := snapshottest.Build(it)
		if err != nil {
			b.Fatal(err)
		}
		data, err := snapshot.MarshalFile(doc)
		if err != nil {
			b.Fatal(err)
		}
		rel := snapshot.RelPath(it.Provider, id)
		b.Run(it.Provider, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				s, fs := check.CheckBytes(rel, data, check.Options{})
				if s == nil || fs.Errors() > 0 {
					b.Fatalf("findings: %v", fs)
				}
			}
		})
	}
}

// BenchmarkCheckSet: the whole static check of a 1,000-snapshot set on disk
// (reported per snapshot with the custom metric).
func BenchmarkCheckSet(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	if _, err := gen.WriteSet(dir, n); err != nil {
		b.Fatal(err)
	}
	st := &snapshot.Store{Dir: dir}
	for b.Loop() {
		res, err := check.CheckSet(st, check.Options{}, nil)
		if err != nil || !res.Valid() {
			b.Fatalf("%v %v", err, res.Findings)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/snapshot")
}

// BenchmarkParseManifest: decoding, schema, hash and entries of a
// 2,000-entry manifest (reported per entry with the custom metric).
func BenchmarkParseManifest(b *testing.B) {
	const n = 2000
	dir := b.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.Many(n)...); err != nil {
		b.Fatal(err)
	}
	data, err := (&snapshot.Store{Dir: dir}).ReadRel(snapshot.ManifestName, snapshot.MaxManifestSize)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m, fs := check.ParseManifest(snapshot.ManifestName, data, check.Options{})
		if m == nil || len(fs) > 0 {
			b.Fatalf("findings: %v", fs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}
