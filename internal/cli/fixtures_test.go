package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

const fixtureRoot = "../../testdata"

// fixtureSet is a snapshot folder under construction for a fixture.
type fixtureSet struct {
	t   *testing.T
	dir string // the .ai-snapshots folder
}

func (f *fixtureSet) path(rel string) string { return filepath.Join(f.dir, filepath.FromSlash(rel)) }

// only returns the rel path of the single file of provider.
func (f *fixtureSet) only(provider string) string {
	es, err := os.ReadDir(f.path(provider))
	if err != nil || len(es) != 1 {
		f.t.Fatalf("want one %s file: %v %v", provider, es, err)
	}
	return provider + "/" + es[0].Name()
}

func (f *fixtureSet) read(rel string) map[string]any {
	data, err := os.ReadFile(f.path(rel))
	if err != nil {
		f.t.Fatal(err)
	}
	v, err := snapshot.Decode(data)
	if err != nil {
		f.t.Fatal(err)
	}
	return v.(map[string]any)
}

func (f *fixtureSet) write(rel string, doc map[string]any, kind string) {
	var data []byte
	var err error
	if kind == "manifest" {
		data, err = snapshot.MarshalManifest(doc)
	} else {
		data, err = snapshot.MarshalFile(doc)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.writeRaw(rel, data)
}

func (f *fixtureSet) writeRaw(rel string, data []byte) {
	os.MkdirAll(filepath.Dir(f.path(rel)), 0o755)
	if err := os.WriteFile(f.path(rel), data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// edit changes the record of provider's file. With reseal, every hash
// (record, file, manifest entry, manifest) is recomputed so only the edit
// itself is wrong.
func (f *fixtureSet) edit(provider string, reseal bool, fn func(rec map[string]any)) {
	rel := f.only(provider)
	doc := f.read(rel)
	rec := doc["snapshots"].([]any)[0].(map[string]any)
	fn(rec)
	if reseal {
		f.reseal(rel, doc)
	}
	f.write(rel, doc, "file")
}

func (f *fixtureSet) reseal(rel string, doc map[string]any) {
	rec := doc["snapshots"].([]any)[0].(map[string]any)
	if err := snapshot.Rehash(rec); err != nil {
		f.t.Fatal(err)
	}
	fh, _ := snapshot.FileHash(doc["version"].(string), []string{rec["hash"].(string)})
	doc["hash"] = fh
	f.editManifest(func(m map[string]any) {
		for _, e := range m["snapshots"].([]any) {
			em := e.(map[string]any)
			if em["file"] == rel {
				em["hash"] = fh
			}
		}
	}, true)
}

func (f *fixtureSet) editManifest(fn func(m map[string]any), reseal bool) {
	m := f.read(snapshot.ManifestName)
	fn(m)
	if reseal {
		delete(m, "hash")
		h, _ := snapshot.DocumentHash(m)
		m["hash"] = h
	}
	f.write(snapshot.ManifestName, m, "manifest")
}

func baseItems() []snapshottest.Item {
	return []snapshottest.Item{
		snapshottest.OpenAIChat("Summarize: AI is transforming software development"),
		snapshottest.AnthropicMessage("What is snapshot testing?"),
	}
}

func writeBase(t *testing.T, dir string, items ...snapshottest.Item) {
	if len(items) == 0 {
		items = baseItems()
	}
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
}

func req(rec map[string]any) map[string]any  { return rec["request"].(map[string]any) }
func resp(rec map[string]any) map[string]any { return rec["response"].(map[string]any) }

// invalidFixtures: one broken rule each. build writes the set into dir.
var invalidFixtures = []struct {
	name  string
	build func(f *fixtureSet)
}{
	// The specification's four validation examples.
	{"spec-missing-required-fields", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) {
			q := req(r)
			delete(q, "messages")
			delete(q, "temperature")
			delete(q, "max_tokens")
		})
	}},
	{"spec-hash-mismatch", func(f *fixtureSet) {
		f.edit("openai", false, func(r map[string]any) { r["hash"] = "sha256:" + strings.Repeat("ab", 32) })
	}},
	{"spec-partial-capture-messages-string", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) { req(r)["messages"] = "..." })
	}},
	{"spec-invalid-type-temperature-string", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) { req(r)["temperature"] = "0.7" })
	}},
	// Hashes at each level.
	{"record-content-edited", func(f *fixtureSet) {
		f.edit("anthropic", false, func(r map[string]any) { resp(r)["content"] = "edited by hand" })
	}},
	{"file-hash-mismatch", func(f *fixtureSet) {
		rel := f.only("openai")
		doc := f.read(rel)
		doc["hash"] = "sha256:" + strings.Repeat("0", 64)
		f.write(rel, doc, "file")
	}},
	{"manifest-hash-mismatch", func(f *fixtureSet) {
		f.editManifest(func(m map[string]any) { m["updated_at"] = "2030-01-01T00:00:00Z" }, false)
	}},
	{"manifest-entry-hash-mismatch", func(f *fixtureSet) {
		f.editManifest(func(m map[string]any) {
			m["snapshots"].([]any)[0].(map[string]any)["hash"] = "sha256:" + strings.Repeat("1", 64)
		}, true)
	}},
	// Manifest ↔ files.
	{"manifest-missing-entry", func(f *fixtureSet) {
		f.editManifest(func(m map[string]any) { m["snapshots"] = m["snapshots"].([]any)[1:] }, true)
	}},
	{"manifest-entry-without-file", func(f *fixtureSet) {
		os.Remove(f.path(f.only("openai")))
	}},
	{"manifest-traversal-path", func(f *fixtureSet) {
		f.editManifest(func(m map[string]any) {
			m["snapshots"].([]any)[0].(map[string]any)["file"] = "../../etc/passwd"
		}, true)
	}},
	{"manifest-duplicate-id", func(f *fixtureSet) {
		f.editManifest(func(m map[string]any) {
			l := m["snapshots"].([]any)
			m["snapshots"] = append(l, l[0])
		}, true)
	}},
	{"manifest-missing", func(f *fixtureSet) { os.Remove(f.path(snapshot.ManifestName)) }},
	{"symlinked-file", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		os.MkdirAll(filepath.Join(f.dir, "..", "elsewhere"), 0o755)
		os.WriteFile(filepath.Join(f.dir, "..", "elsewhere", "real.json"), data, 0o644)
		os.Remove(f.path(rel))
		os.Symlink("../../elsewhere/real.json", f.path(rel))
	}},
	{"unexpected-file", func(f *fixtureSet) { f.writeRaw("openai/notes.txt", []byte("hello\n")) }},
	// Untrusted bytes.
	{"duplicate-key", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, []byte(strings.Replace(string(data), `"seed": 42,`, `"seed": 42, "seed": 7,`, 1)))
	}},
	{"invalid-utf8", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, []byte(strings.Replace(string(data), "Summarize:", "Summ\xff\xfeize:", 1)))
	}},
	{"huge-integer", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, []byte(strings.Replace(string(data), `"seed": 42`, `"seed": 18446744073709551616`, 1)))
	}},
	{"byte-order-mark", func(f *fixtureSet) {
		rel := f.only("anthropic")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, append([]byte("\xEF\xBB\xBF"), data...))
	}},
	{"truncated-json", func(f *fixtureSet) {
		rel := f.only("anthropic")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, data[:len(data)/2])
	}},
	{"lone-surrogate", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, []byte(strings.Replace(string(data), "Summarize:", `Summ\ud800arize:`, 1)))
	}},
	{"trailing-data", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		f.writeRaw(rel, append(data, []byte("{}\n")...))
	}},
	// Versions.
	{"version-0.9.0", func(f *fixtureSet) {
		rel := f.only("openai")
		doc := f.read(rel)
		doc["version"] = "0.9.0"
		f.write(rel, doc, "file")
	}},
	{"version-newer", func(f *fixtureSet) {
		rel := f.only("anthropic")
		doc := f.read(rel)
		doc["version"] = "2.0.0"
		f.write(rel, doc, "file")
	}},
	{"legacy-0.9.0-set", func(f *fixtureSet) {
		os.RemoveAll(f.dir)
		os.MkdirAll(f.dir, 0o755)
		f.writeRaw(snapshot.LegacyName, []byte(`{"version": "0.9.0", "snapshots": []}`+"\n"))
	}},
	{"unfinished-migration", func(f *fixtureSet) {
		f.writeRaw(snapshot.LegacyName, []byte(`{"version": "0.9.0", "snapshots": []}`+"\n"))
	}},
	// Determinism policy (records rebuilt so that only the policy fails).
	{"nonzero-temperature", nil},
	{"missing-seed", nil},
	{"anthropic-nonzero-temperature", nil},
	// Ids.
	{"id-file-name-mismatch", func(f *fixtureSet) {
		rel := f.only("openai")
		to := "openai/0123456789ab.json"
		os.Rename(f.path(rel), f.path(to))
		f.editManifest(func(m map[string]any) {
			for _, e := range m["snapshots"].([]any) {
				em := e.(map[string]any)
				if em["file"] == rel {
					em["file"], em["id"] = to, "0123456789ab"
				}
			}
		}, true)
	}},
	{"request-edited-after-recording", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) { req(r)["max_tokens"] = 200 })
	}},
	// Secrets.
	{"openai-key-in-prompt", nil},
	{"bearer-token-in-response", func(f *fixtureSet) {
		f.edit("anthropic", true, func(r map[string]any) {
			resp(r)["content"] = "use Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789"
		})
	}},
	// Schema details.
	{"unknown-record-field", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) { r["approved_by"] = "me" })
	}},
	{"negative-tokens", func(f *fixtureSet) {
		f.edit("anthropic", true, func(r map[string]any) { resp(r)["tokens_used"] = -1 })
	}},
	{"timestamp-not-rfc3339", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) { r["timestamp"] = "2026-01-09 10:30:00" })
	}},
	{"source-absolute-path", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) { r["source"].(map[string]any)["file"] = "/home/me/app/summarizer.py" })
	}},
	{"source-line-zero", func(f *fixtureSet) {
		f.edit("anthropic", true, func(r map[string]any) { r["source"].(map[string]any)["line"] = 0 })
	}},
	{"two-records-in-one-file", func(f *fixtureSet) {
		rel := f.only("openai")
		doc := f.read(rel)
		l := doc["snapshots"].([]any)
		doc["snapshots"] = append(l, l[0])
		f.write(rel, doc, "file")
	}},
	{"lineage-wrong", func(f *fixtureSet) {
		f.edit("openai", true, func(r map[string]any) {
			r["lineage"] = map[string]any{"parent_id": "0123456789ab", "turn": 2}
		})
	}},
	{"deep-nesting", func(f *fixtureSet) {
		rel := f.only("openai")
		data, _ := os.ReadFile(f.path(rel))
		deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
		f.writeRaw(rel, []byte(strings.Replace(string(data), `"seed": 42`, `"seed": 42, "x": `+deep, 1)))
	}},
}

// rebuilt fixtures: items changed before recording, so ids and hashes agree.
var rebuilt = map[string]func() []snapshottest.Item{
	"nonzero-temperature": func() []snapshottest.Item {
		it := baseItems()
		it[0].Request["temperature"] = 0.7
		return it
	},
	"missing-seed": func() []snapshottest.Item {
		it := baseItems()
		delete(it[0].Request, "seed")
		return it
	},
	"anthropic-nonzero-temperature": func() []snapshottest.Item {
		it := baseItems()
		it[1].Request["temperature"] = 0.5
		return it
	},
	"openai-key-in-prompt": func() []snapshottest.Item {
		it := baseItems()
		it[0].Request["messages"] = []any{map[string]any{"role": "user", "content": "my key is sk-proj-" + strings.Repeat("A", 74) + "T3BlbkFJ" + strings.Repeat("B", 74)}}
		return it
	},
}

func TestGenerateFixtures(t *testing.T) {
	if !golden.Update() {
		t.Skip("run with -update to regenerate testdata/valid and testdata/invalid")
	}
	for _, v := range []struct {
		name  string
		items []snapshottest.Item
	}{
		{"openai", []snapshottest.Item{baseItems()[0], snapshottest.OpenAIChat("Translate to French: good morning")}},
		{"anthropic", []snapshottest.Item{baseItems()[1], snapshottest.AnthropicMessage("Name three prime numbers")}},
		{"mixed", baseItems()},
	} {
		dir := filepath.Join(fixtureRoot, "valid", v.name, project.DefaultDir)
		os.RemoveAll(filepath.Dir(dir))
		writeBase(t, dir, v.items...)
	}
	for _, fx := range invalidFixtures {
		root := filepath.Join(fixtureRoot, "invalid", fx.name)
		os.RemoveAll(root)
		dir := filepath.Join(root, project.DefaultDir)
		if mk, ok := rebuilt[fx.name]; ok {
			writeBase(t, dir, mk()...)
			continue
		}
		writeBase(t, dir)
		fx.build(&fixtureSet{t: t, dir: dir})
	}
}

// TestFixtures runs `traceforge verify` on every committed fixture and
// compares exit code and output with the fixture's want.txt.
func TestFixtures(t *testing.T) {
	valid, _ := filepath.Glob(filepath.Join(fixtureRoot, "valid", "*"))
	invalid, _ := filepath.Glob(filepath.Join(fixtureRoot, "invalid", "*"))
	if len(valid) < 3 || len(invalid) < 30 {
		t.Fatalf("want ≥3 valid and ≥30 invalid fixtures, have %d and %d (run go test -run TestGenerateFixtures -update)", len(valid), len(invalid))
	}
	all := append(valid, invalid...)
	sort.Strings(all)
	for _, root := range all {
		root := root
		t.Run(filepath.Base(filepath.Dir(root))+"/"+filepath.Base(root), func(t *testing.T) {
			io, out, errOut := testStreams(t, root)
			code := Main([]string{"verify"}, io)
			got := fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", code, out, errOut)
			golden.Assert(t, filepath.Join(root, "want.txt"), got)
			isValid := strings.Contains(root, string(filepath.Separator)+"valid"+string(filepath.Separator))
			if isValid && code != 0 || !isValid && code != 1 {
				t.Errorf("exit code %d for %s", code, root)
			}
		})
	}
}
