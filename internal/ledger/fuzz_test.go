package ledger_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// FuzzReadEntry: the lean reader never panics, and on every file the full
// check accepts it reads exactly what the full decode reads.
func FuzzReadEntry(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*", "*.json"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"version":"1.0.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{},"response":{"usage":{"prompt_tokens":1e400}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, provider := range []string{"openai", "anthropic", "gemini", "ollama"} {
			var e ledger.Entry
			if ledger.ReadEntry(data, provider, ledger.ReadOptions{Conversation: true}, &e) != nil || !snapshot.ValidProvider(provider) {
				continue
			}
			rel := snapshot.RelPath(provider, e.ID)
			if s, fs := check.CheckBytes(rel, data, check.Options{}); s != nil && fs.Errors() == 0 {
				compareLean(t, rel, data)
			}
		}
	})
}
