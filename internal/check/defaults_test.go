package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

const defaultsConfig = `{"defaults": [{"model": "*", "endpoint": "/v1/chat/completions", "set": {"/temperature": 0, "/seed": 42, "/max_completion_tokens": %d}}]}`

func configWith(t *testing.T, maxTokens int) *Config {
	t.Helper()
	return mustConfig(t, fmt.Sprintf(defaultsConfig, maxTokens))
}

// recordDefaulted writes one snapshot of the app's default call (no
// temperature, seed or max tokens) as record does under cfg, and indexes
// the set.
func recordDefaulted(t *testing.T, cfg *Config) (*snapshot.Store, string) {
	t.Helper()
	st := &snapshot.Store{Dir: t.TempDir()}
	req := map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "Say hi"}}}
	applied := cfg.Defaults.ApplyDefaults("/v1/chat/completions", req)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	resp := snapshot.Response{Fields: snapshot.Fields{Content: "Hi", TokensUsed: 3, FinishReason: "stop"}, LatencyMS: 5}
	rec, _, err := registry.NewRecord("openai", "/v1/chat/completions", at, source.Source{File: "app.py", Line: 3, Function: "main"}, req, nil, resp, cfg.KeyContext())
	if err != nil {
		t.Fatal(err)
	}
	if err := defaults.Mark(rec, applied); err != nil {
		t.Fatal(err)
	}
	doc, err := snapshot.FileDocument(rec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := snapshot.MarshalFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	rel := snapshot.RelPath("openai", rec["id"].(string))
	if err := st.WriteAtomic(rel, data); err != nil {
		t.Fatal(err)
	}
	if _, err := Reindex(st, Options{Config: cfg}, at); err != nil {
		t.Fatal(err)
	}
	return st, rel
}

// A record completed by request defaults verifies under the config that
// completed it, is stale (a rekey finding at defaults_applied) under a
// changed default, and rekey rewrites its request, defaults_applied and id;
// a config that no longer completes it makes rekey refuse, writing nothing.
func TestDefaultsStalenessAndRekey(t *testing.T) {
	old := configWith(t, 4096)
	st, rel := recordDefaulted(t, old)
	set, err := CheckSet(st, Options{Config: old}, nil)
	if err != nil || set.Findings.Errors() != 0 {
		t.Fatalf("under its own config: %v %v", err, set.Findings)
	}

	changed := configWith(t, 8192)
	set, err = CheckSet(st, Options{Config: changed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(set.Findings); !slices.Equal(got, []string{RuleRekey}) {
		t.Fatalf("under a changed default: %v", set.Findings)
	}
	f := set.Findings[0]
	if f.Pointer != "/snapshots/0/defaults_applied" || !strings.Contains(f.Message, "/max_completion_tokens=4096") ||
		!strings.Contains(f.Message, "/max_completion_tokens=8192") || !strings.Contains(f.Fix, "reindex --rekey") {
		t.Fatalf("finding %+v", f)
	}

	res, err := Rekey(st, Options{Config: changed}, time.Now())
	if err != nil {
		t.Fatalf("rekey: %v %v", err, res.Refused)
	}
	if len(res.Moves) != 1 || res.Moves[0].From != rel || res.Moves[0].To == rel {
		t.Fatalf("moves %+v", res.Moves)
	}
	set, err = CheckSet(st, Options{Config: changed}, nil)
	if err != nil || set.Findings.Errors() != 0 {
		t.Fatalf("after rekey: %v %v", err, set.Findings)
	}
	data, err := os.ReadFile(filepath.Join(st.Dir, res.Moves[0].To))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"max_completion_tokens": 8192`) {
		t.Fatalf("rekeyed file:\n%s", data)
	}

	// No rule any more: the stored call would lack temperature; rekey refuses.
	before, _ := os.ReadFile(filepath.Join(st.Dir, res.Moves[0].To))
	res, err = Rekey(st, Options{Config: mustConfig(t, `{"defaults": []}`)}, time.Now())
	if !errors.Is(err, ErrRekeyRefused) || len(res.Refused) == 0 || !strings.Contains(fmt.Sprint(res.Refused), `required field "temperature" is missing`) {
		t.Fatalf("rekey without the rule: %v %+v", err, res)
	}
	after, _ := os.ReadFile(filepath.Join(st.Dir, res.Refused[0].File))
	if string(before) != string(after) {
		t.Error("a refused rekey changed the file")
	}
}

// Exception globs cross "/" and may carry conditions on the request.
func TestExceptionGlobsAndConditions(t *testing.T) {
	cfg := mustConfig(t, `{"exceptions": [
		{"model": "*", "when": {"/thinking/type": "enabled"}, "relax": ["temperature"]},
		{"model": "meta-llama/*", "relax": ["seed"]}
	]}`)
	if ex := cfg.ExceptionFor("meta-llama/Llama-3.3-70B-Instruct"); ex == nil || ex.Model != "meta-llama/*" {
		t.Fatalf("meta-llama/*: %+v", ex)
	}
	if ex := cfg.ExceptionFor("claude-sonnet-4-5"); ex != nil {
		t.Fatalf("an exception with conditions matched a bare model: %+v", ex)
	}
	thinking := map[string]any{"model": "claude-sonnet-4-5", "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}
	if ex := cfg.ExceptionForRequest(thinking); ex == nil || !ex.Relaxes("temperature") {
		t.Fatalf("thinking: %+v", ex)
	}
	if ex := cfg.ExceptionForRequest(map[string]any{"model": "claude-sonnet-4-5", "thinking": map[string]any{"type": "disabled"}}); ex != nil {
		t.Fatalf("thinking disabled: %+v", ex)
	}
	if _, err := ParseConfig([]byte(`{"exceptions": [{"model": "[x", "relax": ["seed"]}]}`)); err == nil || !strings.Contains(err.Error(), "/exceptions/0/model: bad glob") {
		t.Errorf("bad glob: %v", err)
	}
	if _, err := ParseConfig([]byte(`{"defaults": [{"model": "*", "set": {"/stream": true}}]}`)); err == nil || !strings.Contains(err.Error(), "/defaults/0/set/~1stream") {
		t.Errorf("bad default: %v", err)
	}
}

// A refusal for a missing field names the defaults rule that fills it.
func TestMissingFieldNamesTheDefaultsRule(t *testing.T) {
	doc := map[string]any{"snapshots": []any{map[string]any{
		"endpoint": "/v1beta/models/gemini-2.5-flash:generateContent",
		"request":  map[string]any{"model": "gemini-2.5-flash", "contents": []any{}},
	}}}
	fs := withDefaultsFixes(doc, finding.Findings{{Pointer: "/snapshots/0/request/generationConfig", Severity: finding.Error,
		Message: `required field "generationConfig" is missing`, Fix: "re-record"}})
	want := `add {"model": "gemini-2.5-flash", "endpoint": "/v1beta/models/gemini-2.5-flash:generateContent", "set": {"/generationConfig/maxOutputTokens": 8192, "/generationConfig/seed": 42, "/generationConfig/temperature": 0}} to "defaults" in .traceforge.json`
	if !strings.HasPrefix(fs[0].Fix, want) || !strings.HasSuffix(fs[0].Fix, "otherwise: re-record") {
		t.Fatalf("fix %q", fs[0].Fix)
	}
}
