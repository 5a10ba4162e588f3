package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

var fakeOpenAIKey = "sk-proj-" + strings.Repeat("A", 74) + "T3BlbkFJ" + strings.Repeat("B", 74)
var fakeAnthropicKey = "sk-ant-api03-" + strings.Repeat("x", 93) + "AA"

func TestSecretRulesAndRedaction(t *testing.T) {
	for _, tc := range []struct{ in, rule string }{
		{"key " + fakeOpenAIKey + " end", "openai-api-key"},
		{"legacy sk-" + strings.Repeat("a", 20) + "T3BlbkFJ" + strings.Repeat("b", 20), "openai-api-key"},
		{fakeAnthropicKey, "anthropic-api-key"},
		{"?key=AIzaSyD" + strings.Repeat("k", 31) + "-&alt=sse", "gcp-api-key"},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "bearer-token"},
	} {
		m := ScanSecrets(map[string]any{"a": []any{tc.in}}, "")
		if len(m) != 1 || m[0].Rule != tc.rule || m[0].Pointer != "/a/0" {
			t.Errorf("%q: %+v, want one %s at /a/0", tc.in, m, tc.rule)
		}
		red := Redact(tc.in)
		if strings.Contains(red, strings.TrimPrefix(tc.in, "key ")) || !strings.Contains(red, "[REDACTED:"+tc.rule+"]") {
			t.Errorf("Redact(%q) = %q", tc.in, red)
		}
	}
	for _, clean := range []string{"sk-short", "the bearer of good news", "ask-me", "AIza is short"} {
		if m := ScanSecrets(clean, ""); len(m) != 0 {
			t.Errorf("false positive on %q: %+v", clean, m)
		}
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"exceptions":[{"model":"o3*","relax":["temperature","seed"],"live_compare":["finish_reason","tool_names"]}],
	  "allow_secrets":[{"pointer":"/snapshots/0/request/messages/0/content","sha256":"` + strings.Repeat("ab", 32) + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ex := cfg.ExceptionFor("o3-mini"); ex == nil || !ex.Relaxes("seed") {
		t.Errorf("o3-mini should match o3*: %+v", ex)
	}
	if cfg.ExceptionFor("gpt-4o") != nil {
		t.Error("gpt-4o must not match")
	}
	for _, bad := range []string{
		`{"exceptions":[{"model":"o3*"}]}`,
		`{"exceptions":[{"model":"o3*","relax":["everything"]}]}`,
		`{"exceptions":[{"model":"[","relax":["seed"]}]}`,
		`{"allow_secrets":[{"pattern":"sk-.*"}]}`,
		`{"exeptions":[]}`,
		`[]`,
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%s) accepted", bad)
		}
	}
}

func TestLoadConfigErrorNamesFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ConfigName), []byte(`{"exceptions": 1}`), 0o644)
	_, err := LoadConfig(dir)
	if err == nil || !strings.Contains(err.Error(), ConfigName) {
		t.Fatalf("want error naming %s, got %v", ConfigName, err)
	}
	if cfg, err := LoadConfig(t.TempDir()); err != nil || len(cfg.Exceptions) != 0 {
		t.Fatalf("missing config must be empty: %v", err)
	}
}

func checkItem(t *testing.T, it snapshottest.Item, cfg *Config) finding.Findings {
	t.Helper()
	doc, id, err := snapshottest.Build(it)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := snapshot.MarshalFile(doc)
	_, fs := CheckBytes(snapshot.RelPath(it.Provider, id), data, Options{Config: cfg})
	return fs
}

func TestPolicyExceptionRelaxesAndIsReported(t *testing.T) {
	it := snapshottest.OpenAIChat("hi")
	it.Request["model"] = "o3-mini"
	it.Request["temperature"] = 1
	delete(it.Request, "seed")
	fs := checkItem(t, it, &Config{})
	if fs.Errors() != 2 {
		t.Fatalf("without exception want 2 errors (temperature, seed): %v", fs)
	}
	cfg := &Config{Exceptions: []Exception{{Model: "o3*", Relax: []string{"temperature", "seed"}}}}
	fs = checkItem(t, it, cfg)
	if fs.Errors() != 0 || len(fs) != 1 || !strings.Contains(fs[0].Message, "nondeterministic by policy") {
		t.Fatalf("with exception want one policy note: %v", fs)
	}
	// Only what is relaxed is relaxed.
	cfg.Exceptions[0].Relax = []string{"seed"}
	if fs := checkItem(t, it, cfg); fs.Errors() != 1 || fs[0].Pointer != "/snapshots/0/request/temperature" {
		t.Fatalf("relaxing seed must keep the temperature rule: %v", fs)
	}
}

func TestGoOpenAITemperatureEquivalence(t *testing.T) {
	it := snapshottest.OpenAIChat("hi")
	it.Request["temperature"] = 1.401298464324817e-45 // math.SmallestNonzeroFloat32
	if fs := checkItem(t, it, nil); fs.Errors() != 0 {
		t.Fatalf("go-openai's smallest temperature counts as zero: %v", fs)
	}
}

func TestAllowSecretByPointerAndHash(t *testing.T) {
	it := snapshottest.AnthropicMessage("my key " + fakeAnthropicKey)
	it.Response.Content = "noted"
	fs := checkItem(t, it, nil)
	if fs.Errors() != 1 || fs[0].Rule != RuleSecret || strings.Contains(joinFindings(fs), fakeAnthropicKey) {
		t.Fatalf("want one redacted secret finding: %v", fs)
	}
	m := ScanSecrets(map[string]any{"x": "my key " + fakeAnthropicKey}, "")
	cfg := &Config{AllowSecrets: []AllowSecret{{Pointer: fs[0].Pointer, SHA256: m[0].SHA256}}}
	if fs := checkItem(t, it, cfg); fs.Errors() != 0 {
		t.Fatalf("allowed match still reported: %v", fs)
	}
}

// joinFindings joins every finding message (test helper).
func joinFindings(fs finding.Findings) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Error() + f.Fix)
	}
	return b.String()
}

func TestCheckSetAndReindex(t *testing.T) {
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.Many(6)...); err != nil {
		t.Fatal(err)
	}
	st := &snapshot.Store{Dir: dir}
	res, err := CheckSet(st, Options{}, nil)
	if err != nil || !res.Valid() || len(res.Snapshots) != 6 || len(res.ByKey()) != 6 {
		t.Fatalf("valid set: %v %v", err, res.Findings)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	// Reindex of a valid set changes nothing, byte for byte.
	r, err := Reindex(st, Options{}, snapshottest.BaseTime.Add(1e12))
	if err != nil || r.Changed {
		t.Fatalf("reindex of valid set: changed=%v err=%v", r.Changed, err)
	}
	// Drop the manifest and a stray temp file: reindex repairs.
	os.Remove(filepath.Join(dir, "manifest.json"))
	os.WriteFile(filepath.Join(dir, "openai", ".0123456789ab.tmp-abc"), []byte("{"), 0o644)
	if res, _ := CheckSet(st, Options{}, nil); res.Valid() {
		t.Fatal("missing manifest must fail")
	}
	if _, err := Reindex(st, Options{}, snapshottest.BaseTime); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if string(before) != string(after) {
		t.Errorf("reindex did not rebuild the same manifest:\n%s\n%s", before, after)
	}
	// Sharding splits the set without overlap.
	seen := 0
	for k := 1; k <= 3; k++ {
		k := k
		res, _ := CheckSet(st, Options{}, func(rel string) bool {
			_, id, _ := snapshot.ValidRelPath(rel)
			return int(id[0])%3 == k-1
		})
		seen += len(res.Snapshots)
	}
	if seen != 6 {
		t.Errorf("shards cover %d of 6", seen)
	}
}

func TestParsePrices(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"prices": {"gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.6},
	  "claude-sonnet-4-5-20250929": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := cfg.Prices["gpt-4o-mini-2024-07-18"]; !ok || p.Input != 0.15 || p.Output != 0.6 || p.CacheRead != nil || p.CacheWrite != nil {
		t.Errorf("gpt price %+v", p)
	}
	if p, ok := cfg.Prices["claude-sonnet-4-5-20250929"]; !ok || *p.CacheRead != 0.3 || *p.CacheWrite != 3.75 || len(cfg.Prices) != 2 {
		t.Errorf("claude price %+v", p)
	}
	for _, tc := range []struct{ config, want string }{
		{`{"prices": []}`, "/prices must be an object"},
		{`{"prices": {"m": 1}}`, "/prices/m must be an object"},
		{`{"prices": {"m": {"output": 1}}}`, "/prices/m/input is required"},
		{`{"prices": {"m": {"input": 1}}}`, "/prices/m/output is required"},
		{`{"prices": {"m": {"input": -1, "output": 1}}}`, "/prices/m/input must be a number ≥ 0"},
		{`{"prices": {"m": {"input": "1", "output": 1}}}`, "/prices/m/input must be a number ≥ 0"},
		{`{"prices": {"m": {"input": 1, "output": 1, "cache_read": null}}}`, "/prices/m/cache_read must be a number ≥ 0"},
		{`{"prices": {"m": {"input": 1, "output": 1, "cached": 1}}}`, `/prices/m: unknown field "cached"`},
		{`{"prices": {"org/m~1": {"input": 1}}}`, "/prices/org~1m~01/output is required"},
		{`{"prices": {"": {"input": 1, "output": 1}}}`, "/prices/: the model name is empty"},
	} {
		_, err := ParseConfig([]byte(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.config, err, tc.want)
		}
	}
}

// go-openai drops a zero temperature (omitempty); the refusal says so and
// names the way out instead of "re-record it".
func TestMissingTemperatureFixNamesGoOpenAI(t *testing.T) {
	it := snapshottest.OpenAIChat("hi")
	delete(it.Request, "temperature")
	fs := checkItem(t, it, nil)
	var found bool
	for _, f := range fs {
		if f.Pointer == "/snapshots/0/request/temperature" {
			found = true
			if !strings.Contains(f.Fix, "go-openai") || !strings.Contains(f.Fix, "math.SmallestNonzeroFloat32") {
				t.Errorf("fix %q does not explain go-openai's omitempty", f.Fix)
			}
		}
	}
	if !found {
		t.Fatalf("no finding for the missing temperature: %v", fs)
	}
}

// Every wire format's record definition compiles (record.New fails
// otherwise).
func TestWarmSchemasCoversEveryFormat(t *testing.T) {
	if err := WarmSchemas(); err != nil {
		t.Fatal(err)
	}
}
