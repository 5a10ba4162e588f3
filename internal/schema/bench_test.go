package schema_test

import (
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// BenchmarkValidateFile: the JSON Schema check of one realistic file.
func BenchmarkValidateFile(b *testing.B) {
	doc, _, err := snapshottest.Build(gen.Item(0))
	if err != nil {
		b.Fatal(err)
	}
	data, _ := snapshot.MarshalFile(doc)
	v, _ := snapshot.Decode(data)
	for b.Loop() {
		if vs := schema.ValidateFile(v, "#/$defs/chatRecord"); len(vs) != 0 {
			b.Fatal(vs)
		}
	}
}

func BenchmarkValidateSmall(b *testing.B) {
	doc, _, err := snapshottest.Build(snapshottest.OpenAIChat("hi"))
	if err != nil {
		b.Fatal(err)
	}
	data, _ := snapshot.MarshalFile(doc)
	v, _ := snapshot.Decode(data)
	for b.Loop() {
		if vs := schema.ValidateFile(v, "#/$defs/chatRecord"); len(vs) != 0 {
			b.Fatal(vs)
		}
	}
}
