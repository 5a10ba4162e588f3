package ledger_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/ledger"
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
		f.Add(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), data)
	}
	f.Add("openai/aaaaaaaaaaaa.json", []byte(`{"version":"1.0.0","snapshots":[{"id":"aaaaaaaaaaaa","request":{},"response":{"usage":{"prompt_tokens":1e400}}}]}`))
	f.Fuzz(func(t *testing.T, rel string, data []byte) {
		var e ledger.Entry
		for _, provider := range []string{"openai", "anthropic", "gemini", "ollama"} {
			_ = ledger.ReadEntry(data, provider, ledger.ReadOptions{Conversation: true}, &e)
		}
		if s, fs := check.CheckBytes(rel, rel, data, check.Options{}); s != nil && fs.Errors() == 0 {
			compareLean(t, rel, data)
		}
	})
}
