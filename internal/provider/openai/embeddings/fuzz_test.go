package embeddings_test

import (
	"errors"
	"os"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/openai/embeddings"
)

// FuzzFields: any JSON answer either gives fields (no text, tokens ≥ 0) or a
// wire-layer error — never a panic.
func FuzzFields(f *testing.F) {
	for _, name := range []string{"testdata/float.json", "testdata/base64.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"data":[],"model":"m","usage":{"total_tokens":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := provider.Decode(data)
		if err != nil {
			return
		}
		fields, err := embeddings.New().Fields(body)
		if err != nil {
			if !errors.Is(err, provider.ErrMalformed) && !errors.Is(err, provider.ErrNoUsage) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !fields.NoText || fields.TokensUsed < 0 || fields.Content != "" {
			t.Fatalf("fields %+v", fields)
		}
	})
}
