package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// addSetSeeds adds every snapshot file of the repository's fixture sets.
func addSetSeeds(f *testing.F, add func(openai bool, data []byte)) {
	files, _ := filepath.Glob("../../testdata/*/*/.ai-snapshots/*/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) < 64<<10 {
			add(filepath.Base(filepath.Dir(p)) == "openai", data)
		}
	}
}

// FuzzCheckBytes runs the whole per-file pipeline (strict decode, schema,
// the translation of schema violations into findings, hashes, lineage,
// policy, secret scan) over arbitrary bytes: it never panics, every finding
// is attributed and explained, and a file without errors is a snapshot
// whose id is its name. Seeds: the fixture sets and testdata/fuzz.
func FuzzCheckBytes(f *testing.F) {
	addSetSeeds(f, func(openai bool, data []byte) { f.Add(openai, data) })
	f.Add(true, []byte(`{"version":"1.0.0","snapshots":[{}],"hash":"sha256:00"}`))
	f.Fuzz(func(t *testing.T, openai bool, data []byte) {
		p, id := "anthropic", "0123456789ab"
		if openai {
			p = "openai"
		}
		if v, err := snapshot.Decode(data); err == nil {
			if m, ok := v.(map[string]any); ok {
				if ss, ok := m["snapshots"].([]any); ok && len(ss) > 0 {
					if r, ok := ss[0].(map[string]any); ok {
						if s, ok := r["id"].(string); ok && snapshot.ValidID(s) {
							id = s
						}
					}
				}
			}
		}
		rel := p + "/" + id + ".json"
		s, fs := CheckBytes(rel, data, Options{Config: &Config{}})
		for _, fd := range fs {
			if fd.File != rel || fd.Rule == "" || strings.TrimSpace(fd.Message) == "" {
				t.Fatalf("unattributed finding %+v", fd)
			}
		}
		if fs.Errors() == 0 && (s == nil || s.Rel != rel || s.Record.ID != id) {
			t.Fatalf("no error, but snapshot %+v for %s", s, rel)
		}
	})
}

// FuzzParseConfig: the policy file parser never panics and what it accepts
// can be queried for any model.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{`{}`, `{"exceptions":[{"model":"o3*","relax":["temperature","seed"],"live_compare":["finish_reason","tool_names"]}]}`,
		`{"allow_secrets":[{"pointer":"/snapshots/0/request/messages/0/content","sha256":"` + strings.Repeat("a", 64) + `"}]}`,
		`{"exceptions":[{"model":"[","relax":["x"]}]}`, `{"exceptions":null}`,
		`{"normalize":[{"rule":"uuid"},{"rule":"regex","name":"t","pattern":"(\d+)","replace":"${1}","paths":["/messages/*/content"]},{"rule":"drop","paths":["/user","/a~1b/0"]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			return
		}
		for _, e := range cfg.Exceptions {
			_ = cfg.ExceptionFor(e.Model)
			_ = e.Relaxes("temperature")
		}
		_ = cfg.ExceptionFor("gpt-4o-mini")
		// Whatever normalizers parse apply to a request without panicking
		// and never modify it.
		req := map[string]any{"model": "m", "user": "u", "messages": []any{map[string]any{"role": "user", "content": "2026-01-09 17"}}}
		if kc := cfg.KeyContext(); kc != nil {
			out, _ := kc.Normalize.NormalizeKey(req)
			if out == nil || req["user"] != "u" {
				t.Fatalf("normalizers broke the request: %v", req)
			}
		}
	})
}
