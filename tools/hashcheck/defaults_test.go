package hashcheck_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/preset"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// writeDefaulted writes records as record does under the deterministic
// preset for SDK default calls (no temperature, seed or max tokens), with
// defaults_applied, and indexes the set.
func writeDefaulted(t *testing.T, dir string) *check.Config {
	t.Helper()
	p, _ := preset.Get(preset.Deterministic)
	cfg, err := check.ParseConfig([]byte(`{"defaults": ` + p.DefaultsJSON("") + `, "exceptions": ` + p.ExceptionsJSON("") + `}`))
	if err != nil {
		t.Fatal(err)
	}
	st := &snapshot.Store{Dir: dir}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	calls := []struct {
		provider, endpoint string
		request            map[string]any
	}{
		{"openai", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "Say hi"}}}},
		{"gemini", "/v1beta/models/gemini-2.5-flash:generateContent", map[string]any{"model": "gemini-2.5-flash", "contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Say hi"}}}}}},
	}
	for _, c := range calls {
		applied := cfg.Defaults.ApplyDefaults(defaultsEndpoint(c.endpoint), c.request)
		if len(applied) == 0 {
			t.Fatalf("%s: the preset set nothing", c.endpoint)
		}
		resp := snapshot.Response{Fields: snapshot.Fields{Content: "Hi", TokensUsed: 3, FinishReason: "stop"}, LatencyMS: 5}
		rec, _, err := registry.NewRecord(c.provider, defaultsEndpoint(c.endpoint), at, source.Source{File: "app.py", Line: 3, Function: "main"}, c.request, nil, resp, cfg.KeyContext())
		if err != nil {
			t.Fatal(err)
		}
		if err := defaults.Mark(rec, applied); err != nil {
			t.Fatal(err)
		}
		doc, _ := snapshot.FileDocument(rec)
		data, err := snapshot.MarshalFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.WriteAtomic(snapshot.RelPath(c.provider, rec["id"].(string)), data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := check.Reindex(st, check.Options{Config: cfg}, at); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestNodeAgreesOnDefaultsApplied: records completed by request defaults
// (format 1.2.0's defaults_applied, hashed with the record; the key over the
// stored request, defaults included) hash the same in Node; a
// defaults_applied naming a member the request lacks is reported.
func TestNodeAgreesOnDefaultsApplied(t *testing.T) {
	t.Parallel()
	node(t)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	cfg := writeDefaulted(t, dir)
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			t.Errorf("Go rejects the set: %s", f.Error())
		}
	}
	mustAgree(t, dir)

	// A defaults_applied that names a member the request lacks, resealed.
	files, _ := filepath.Glob(filepath.Join(dir, "openai", "*.json"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	v, _ := snapshot.Decode(data)
	doc := v.(map[string]any)
	rec := doc["snapshots"].([]any)[0].(map[string]any)
	rec[defaults.Field] = append(rec[defaults.Field].([]any), "/top_p")
	if err := snapshot.Rehash(rec); err != nil {
		t.Fatal(err)
	}
	doc["hash"], _ = snapshot.FileHash(snapshot.Version, []string{rec["hash"].(string)})
	out, err := snapshot.MarshalFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], out, 0o644); err != nil {
		t.Fatal(err)
	}
	rel := "openai/" + filepath.Base(files[0])
	mustDisagree(t, dir, rel+": defaults_applied names /top_p, which the request lacks")
}

func defaultsEndpoint(e string) provider.Endpoint { return provider.Endpoint(e) }
