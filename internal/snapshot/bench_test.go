package snapshot_test

import (
	"fmt"
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// benchFile returns a realistic snapshot file (bench/gen item i), decoded
// and as bytes.
func benchFile(b *testing.B, i int) (map[string]any, []byte) {
	b.Helper()
	doc, _, err := snapshottest.Build(gen.Item(i))
	if err != nil {
		b.Fatal(err)
	}
	data, err := snapshot.MarshalFile(doc)
	if err != nil {
		b.Fatal(err)
	}
	v, err := snapshot.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	return v.(map[string]any), data
}

func benchRecord(b *testing.B, i int) map[string]any {
	doc, _ := benchFile(b, i)
	return doc["snapshots"].([]any)[0].(map[string]any)
}

// BenchmarkDecode: the strict decoder on one file (~6 KB).
func BenchmarkDecode(b *testing.B) {
	_, data := benchFile(b, 0)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := snapshot.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonical: RFC 8785 bytes of one decoded record.
func BenchmarkCanonical(b *testing.B) {
	rec := benchRecord(b, 0)
	for b.Loop() {
		if _, err := snapshot.Canonical(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordHash: the record hash (canonicalize + SHA-256).
func BenchmarkRecordHash(b *testing.B) {
	rec := benchRecord(b, 0)
	for b.Loop() {
		if _, err := snapshot.RecordHash(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalFile: writing one file the way it is stored.
func BenchmarkMarshalFile(b *testing.B) {
	doc, _ := benchFile(b, 0)
	for b.Loop() {
		if _, err := snapshot.MarshalFile(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteRenamed: one new snapshot file put in place as record does
// (--sync=after-answer: the flush is deferred and not measured), with temp
// files made on the spot or taken from a snapshot.TempPool. cpu-ns/op is
// the process's CPU per file, the pool's refills included.
func BenchmarkWriteRenamed(b *testing.B) {
	for _, pooled := range []bool{false, true} {
		name := "create"
		if pooled {
			name = "pool"
		}
		b.Run(name, func(b *testing.B) {
			_, data := benchFile(b, 1)
			st := &snapshot.Store{Dir: b.TempDir()}
			if pooled {
				st.Temps = snapshot.NewTempPool(8)
				defer st.Temps.Close()
			}
			fl := snapshot.NewFlusher(nil)
			fl.SetFlush(func([]snapshot.Renamed) error { return nil })
			i := 0
			stop := snapshottest.ReportCPU(b)
			for b.Loop() {
				i++
				if err := st.WriteRenamed("openai/"+fmt.Sprintf("%012x", i)+".json", data, fl); err != nil {
					b.Fatal(err)
				}
			}
			stop()
			_ = fl.Close()
		})
	}
}
