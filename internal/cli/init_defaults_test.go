package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/provider/preset"
)

// TestInitPresets: init writes the preset's config byte for byte (golden
// files, go test -update rewrites them), it parses, and --defaults picks
// the preset; an unknown preset is a usage error.
func TestInitPresets(t *testing.T) {
	for _, kind := range preset.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root := t.TempDir()
			args := []string{"init"}
			if kind != preset.Deterministic {
				args = append(args, "--defaults", string(kind))
			}
			code, out, errOut := runMigrateCLI(t, root, args...)
			if code != ExitOK {
				t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
			}
			data, err := os.ReadFile(filepath.Join(root, check.ConfigName))
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", "init", string(kind)+".traceforge.json"), string(data))
			cfg, err := check.ParseConfig(data)
			if err != nil {
				t.Fatalf("the config init writes does not parse: %v", err)
			}
			p, _ := preset.Get(kind)
			if cfg.Defaults.Len() != len(p.Defaults) || len(cfg.Exceptions) != len(p.Exceptions) {
				t.Fatalf("parsed %d rules and %d exceptions, the preset has %d and %d", cfg.Defaults.Len(), len(cfg.Exceptions), len(p.Defaults), len(p.Exceptions))
			}
			// Every exception is reported: none is silent.
			for _, e := range p.Exceptions {
				if !strings.Contains(out, "exception: model "+e.Model) {
					t.Errorf("init does not report the exception for %s:\n%s", e.Model, out)
				}
			}
			if !strings.Contains(out, "request defaults: the "+string(kind)+" preset") {
				t.Errorf("init does not name the preset:\n%s", out)
			}
		})
	}
	code, _, errOut := runMigrateCLI(t, t.TempDir(), "init", "--defaults", "random")
	if code != ExitUsage || !strings.Contains(errOut, `unknown --defaults "random"`) {
		t.Fatalf("unknown preset: exit %d\n%s", code, errOut)
	}
}

// TestPresetsNeverSendARejectedValue: models that accept only their
// default sampling get that value or none — OpenAI reasoning models
// temperature 1 on chat completions and no temperature on the Responses
// API, Claude with thinking temperature 1 — and the deterministic preset
// sets temperature 0 everywhere else; the provider preset relaxes the
// determinism rule for every model, explicitly.
func TestPresetsNeverSendARejectedValue(t *testing.T) {
	for _, kind := range preset.Kinds {
		p, _ := preset.Get(kind)
		set, err := p.Set()
		if err != nil {
			t.Fatal(err)
		}
		for _, model := range []string{"o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini"} {
			req := map[string]any{"model": model}
			set.ApplyDefaults("/v1/chat/completions", req)
			if got := req["temperature"]; got == nil || got.(interface{ String() string }).String() != "1" {
				t.Errorf("%s: chat temperature for %s is %v, want 1 (the only value it accepts)", kind, model, got)
			}
			req = map[string]any{"model": model}
			set.ApplyDefaults("/v1/responses", req)
			if _, ok := req["temperature"]; ok {
				t.Errorf("%s: the Responses API rejects temperature for %s, the preset sets it", kind, model)
			}
		}
		req := map[string]any{"model": "claude-opus-4-1", "thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}}
		set.ApplyDefaults("/v1/messages", req)
		if got := req["temperature"]; got == nil || got.(interface{ String() string }).String() != "1" {
			t.Errorf("%s: Claude with thinking gets temperature %v, want 1", kind, got)
		}
		cfg, err := check.ParseConfig([]byte(`{"defaults": ` + p.DefaultsJSON("") + `, "exceptions": ` + p.ExceptionsJSON("") + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if ex := cfg.ExceptionForRequest(req); ex == nil || !ex.Relaxes("temperature") {
			t.Errorf("%s: no exception relaxes temperature for Claude with thinking", kind)
		}
		for _, model := range []string{"gpt-4o-mini", "meta-llama/Llama-3.3-70B-Instruct"} {
			ex := cfg.ExceptionFor(model)
			if kind == preset.Deterministic && ex != nil {
				t.Errorf("deterministic: %s is excepted (%s)", model, ex.Model)
			}
			if kind == preset.Provider && (ex == nil || !ex.Relaxes("temperature") || !ex.Relaxes("seed")) {
				t.Errorf("provider: %s has no exception relaxing temperature and seed", model)
			}
		}
	}
}
