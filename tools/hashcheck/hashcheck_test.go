package hashcheck_test

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/migrate"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

// node returns the node binary, failing (never skipping) when the check
// cannot run: the cross-language agreement is part of the contract.
func node(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not in PATH: the cross-language hash check needs Node.js ≥ 18 " +
			"(.ci/run installs everything; locally install Node, then run: (cd tools/hashcheck && npm ci --no-audit --no-fund))")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "canonicalize", "package.json")); err != nil {
		t.Fatal("tools/hashcheck/node_modules is missing: run (cd tools/hashcheck && npm ci --no-audit --no-fund) — .ci/run does this")
	}
	return bin
}

// hashcheck runs hashcheck.mjs on dirs (one Node process) and returns its
// combined output.
func hashcheck(t *testing.T, dirs ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(node(t), append([]string{"hashcheck.mjs", "--verbose"}, dirs...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustAgree fails unless Node agrees with every id and hash in every dir.
func mustAgree(t *testing.T, dirs ...string) string {
	t.Helper()
	out, err := hashcheck(t, dirs...)
	if err != nil {
		t.Fatalf("Node and Go disagree (%v):\n%s", err, out)
	}
	for _, d := range dirs {
		if !strings.Contains(out, "hashcheck: ok: ") || !strings.Contains(out, " in "+d+"; every id and hash agrees") {
			t.Fatalf("no agreement reported for %s:\n%s", d, out)
		}
	}
	return out
}

func mustDisagree(t *testing.T, dir, want string) {
	t.Helper()
	out, err := hashcheck(t, dir)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, want) {
		t.Fatalf("want exit 1 naming %q, got %v:\n%s", want, err, out)
	}
}

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// edgeItems covers what a second implementation most easily gets wrong:
// tool-call id renumbering for both providers, stream fields, Anthropic
// string content/system, request_headers, lineage, key order by UTF-16 code
// units (non-BMP vs. high BMP), escapes, and number formatting.
func edgeItems() []snapshottest.Item {
	negZero := math.Copysign(0, -1)
	numbers := []any{1e21, 1e-7, 123.456, negZero, 5e-324, 9007199254740991, 0.30000000000000004, 1e300, -1.5e-300, 100.0, 4.35, 2.5e-5}
	props := obj("city", obj("type", "string"),
		"ｱ", obj("type", "string", "description", "halfwidth katakana (U+FF71) sorts after 😀 in UTF-16"),
		"😀", obj("type", "string", "description", "surrogate pair D83D DE00"),
		"é", obj("type", "string"), "e\u0301", obj("type", "string"), "Z", obj("type", "string"), "a", obj("type", "string"),
		"\u0080", obj("type", "string"), "\u007f", obj("type", "string"),
		"__proto__", obj("type", "string", "description", "an ordinary member in JSON, not a prototype"), "constructor", obj("type", "string"))
	tools := []any{obj("type", "function", "function", obj("name", "get_weather", "description", "Weather </script> & \"quotes\"",
		"parameters", obj("type", "object", "properties", props, "required", []any{"city"})))}
	system := obj("role", "system", "content", "Use tools. Ünïcødé ✓ — \u2028 line separator, \u0001 control, tab\t, back\\slash, \"quote\"")
	user := obj("role", "user", "content", "Weather in Paris and Oslo? 🌦️ naïve café")

	oaParent := snapshottest.OpenAIChat("parent")
	oaParent.Request = obj("model", "gpt-4o-mini", "messages", []any{system, user},
		"temperature", float64(math.SmallestNonzeroFloat32), "max_tokens", 200, "seed", 7, "top_p", 0.1,
		"frequency_penalty", -0.5, "presence_penalty", 1e-7, "tools", tools, "x_numbers", numbers,
		"stream", true, "stream_options", obj("include_usage", true))
	oaParent.Response = snapshot.Response{LatencyMS: 800, Fields: snapshot.Fields{Content: "", TokensUsed: 120, FinishReason: "tool_calls",
		ToolCalls: []any{
			obj("id", "call_abcXYZ", "type", "function", "function", obj("name", "get_weather", "arguments", `{"city":"Paris"}`)),
			obj("id", "call_def", "type", "function", "function", obj("name", "get_weather", "arguments", `{"city":"Oslo"}`)),
		},
		Usage: obj("prompt_tokens", 100, "completion_tokens", 20, "total_tokens", 120), Model: "gpt-4o-mini-2024-07-18"}, Stream: true,
		Body: obj("id", "chatcmpl-1", "object", "chat.completion", "created", 1767954600, "model", "gpt-4o-mini-2024-07-18",
			"choices", []any{obj("index", 0, "finish_reason", "tool_calls", "message", obj("role", "assistant", "content", nil))},
			"x", obj("ｱ", 1, "😀", 2, "a", 3.25))}

	oa := snapshottest.OpenAIChat("child")
	oa.Request = obj("model", "gpt-4o-mini", "messages", []any{system, user,
		obj("role", "assistant", "content", nil, "tool_calls", oaParent.Response.ToolCalls),
		obj("role", "tool", "tool_call_id", "call_def", "content", `{"temp_c":-3.5}`),
		obj("role", "tool", "tool_call_id", "call_abcXYZ", "content", `{"temp_c":18}`),
	}, "temperature", 0, "max_tokens", 200, "seed", 7, "tools", tools, "stream", true)
	oa.Response.Content = "Paris: 18 °C. Oslo: −3.5 °C ❄"
	oa.Source = source.Source{File: "agents/wëather.go", Line: 88, Function: "(*Agent).Answer"}

	an := snapshottest.AnthropicMessage("tools")
	an.Headers = obj("anthropic-version", "2023-06-01", "anthropic-beta", "tools-2024-04-04")
	an.Request = obj("model", "claude-sonnet-4-5", "max_tokens", 512, "temperature", 0.0, "system", "Answer briefly. 日本語も可。",
		"stream", true, "metadata", obj("user_id", "u-1"),
		"tools", []any{obj("name", "get_weather", "input_schema", obj("type", "object", "properties", props))},
		"messages", []any{
			obj("role", "user", "content", "Weather in Oslo and Bergen?"),
			obj("role", "assistant", "content", []any{
				obj("type", "text", "text", "Checking both."),
				obj("type", "tool_use", "id", "toolu_01B", "name", "get_weather", "input", obj("city", "Bergen")),
				obj("type", "tool_use", "id", "toolu_01A", "name", "get_weather", "input", obj("city", "Oslo")),
			}),
			obj("role", "user", "content", []any{
				obj("type", "tool_result", "tool_use_id", "toolu_01A", "content", "3°C, snow"),
				obj("type", "tool_result", "tool_use_id", "toolu_01B", "content", []any{obj("type", "text", "text", "7°C, rain")}),
			}),
		})
	an.Response = snapshot.Response{LatencyMS: 1234, Stream: true, Fields: snapshot.Fields{Content: "Oslo 3 °C snow; Bergen 7 °C rain. 🌨️", TokensUsed: 321, FinishReason: "end_turn",
		Usage: obj("input_tokens", 300, "output_tokens", 21, "cache_read_input_tokens", 0), Model: "claude-sonnet-4-5-20250929"}}

	anParent := snapshottest.AnthropicMessage("Weather in Oslo and Bergen?")
	anParent.Headers = an.Headers
	anParent.Request = obj("model", "claude-sonnet-4-5", "max_tokens", 512, "temperature", 0.0, "system", "Answer briefly. 日本語も可。",
		"metadata", obj("user_id", "u-1"), "tools", an.Request["tools"],
		"messages", []any{obj("role", "user", "content", []any{obj("type", "text", "text", "Weather in Oslo and Bergen?")})})

	completion := snapshottest.OpenAIChat("completion")
	completion.Request = obj("model", "gpt-3.5-turbo-instruct", "prompt", "Say \"ok\" ✓", "temperature", 0, "max_tokens", 5, "seed", 1, "stop", "\n", "top_p", nil)
	completion.Response = snapshot.Response{LatencyMS: 90, Fields: snapshot.Fields{Content: "ok", TokensUsed: 6, FinishReason: "stop",
		Usage: obj("prompt_tokens", 4, "completion_tokens", 2, "total_tokens", 6)}}
	completion.Time = time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.FixedZone("CET", 3600))

	// Responses: a function-tool round trip (input-run lineage, call and
	// item ids renumbered) and a call chained by previous_response_id.
	respTool := snapshottest.OpenAIChat("responses tool")
	respTool.Endpoint = "/v1/responses"
	respTool.Request = obj("model", "gpt-4.1-mini", "temperature", 0, "max_output_tokens", 64, "stream", true, "input", []any{
		obj("role", "user", "content", "Weather in Oslo? ❄"),
		obj("type", "reasoning", "id", "rs_9", "summary", []any{}),
		obj("type", "function_call", "id", "fc_Z", "call_id", "call_Q", "name", "get_weather", "arguments", `{"city":"Oslo"}`),
		obj("type", "function_call_output", "call_id", "call_Q", "output", `{"temp_c":-3.5}`),
		obj("type", "item_reference", "id", "rs_9"),
	})
	respTool.Response = snapshot.Response{LatencyMS: 70, Stream: true, Fields: snapshot.Fields{Content: "Oslo: −3.5 °C", TokensUsed: 40, FinishReason: "completed",
		Usage: obj("input_tokens", 30, "output_tokens", 10, "total_tokens", 40)},
		Body: obj("id", "resp_tool", "object", "response", "status", "completed", "output", []any{})}
	respRoot := snapshottest.OpenAIChat("responses root")
	respRoot.Endpoint = "/v1/responses"
	respRoot.Request = obj("model", "gpt-4.1-mini", "temperature", 0, "max_output_tokens", 64, "input", "Name a prime.")
	respRoot.Response = snapshot.Response{LatencyMS: 50, Fields: snapshot.Fields{Content: "7", TokensUsed: 9, FinishReason: "completed",
		Usage: obj("total_tokens", 9)}, Body: obj("id", "resp_root", "object", "response", "status", "completed", "output", []any{})}
	_, rootID, _ := snapshottest.Build(respRoot)
	respChained := snapshottest.OpenAIChat("responses chained")
	respChained.Endpoint = "/v1/responses"
	respChained.Request = obj("model", "gpt-4.1-mini", "temperature", 0, "max_output_tokens", 64, "input", "Another.", "previous_response_id", "resp_root")
	respChained.KeyContext = &provider.KeyContext{Parent: func(id string) (string, int, bool) { return rootID, 1, id == "resp_root" }}
	respChained.Response = snapshot.Response{LatencyMS: 50, Fields: snapshot.Fields{Content: "11", TokensUsed: 19, FinishReason: "completed",
		Usage: obj("total_tokens", 19)}, Body: obj("id", "resp_next", "object", "response", "status", "completed", "output", []any{})}
	emb := snapshottest.OpenAIChat("embeddings")
	emb.Endpoint = "/v1/embeddings"
	emb.Request = obj("model", "text-embedding-3-small", "input", []any{"ü", "😀"}, "encoding_format", "base64")
	emb.Response = snapshot.Response{LatencyMS: 12, Fields: snapshot.Fields{NoText: true, TokensUsed: 2, Usage: obj("prompt_tokens", 2, "total_tokens", 2)},
		Body: obj("object", "list", "data", []any{obj("object", "embedding", "index", 0, "embedding", "AAAAAA==")}, "model", "text-embedding-3-small")}

	return []snapshottest.Item{oaParent, oa, an, anParent, completion,
		snapshottest.OpenAIChat("plain"), snapshottest.AnthropicMessage("plain"), respTool, respRoot, respChained, emb}
}

func TestNodeAgreesOnEdgeCaseSet(t *testing.T) {
	t.Parallel()
	node(t)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	if _, err := snapshottest.WriteSet(dir, edgeItems()...); err != nil {
		t.Fatal(err)
	}
	// The set is valid for Go first.
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: &check.Config{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			t.Errorf("Go rejects the edge-case set: %s", f.Error())
		}
	}
	out := mustAgree(t, dir)
	// Lineage was exercised for both providers.
	if n := strings.Count(out, " parent="); n != 4 {
		t.Errorf("%d records with lineage, want 4 (chat, messages, Responses input runs and chain):\n%s", n, out)
	}
	// And Node compared keys (the file names) computed from renumbered tool-call ids.
	for _, s := range set.Snapshots {
		if !strings.Contains(out, s.Rel+" key="+s.Key) {
			t.Errorf("Node computed a different key for %s (Go: %s):\n%s", s.Rel, s.Key, out)
		}
	}
}

func TestNodeDetectsTampering(t *testing.T) {
	t.Parallel()
	node(t)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	entries, err := snapshottest.WriteSet(dir, edgeItems()...)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(entries[0].File))
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), `"latency_ms": `, `"latency_ms": 1`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustDisagree(t, dir, entries[0].File+": record hash")

	// A request edited after recording changes the key: the id no longer matches.
	dir2 := filepath.Join(t.TempDir(), ".ai-snapshots")
	entries, err = snapshottest.WriteSet(dir2, snapshottest.OpenAIChat("edit me"))
	if err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(dir2, filepath.FromSlash(entries[0].File))
	b, _ = os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "edit me", "edited", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustDisagree(t, dir2, "id (from the request key)")
}

var legacyDir = filepath.Join("..", "..", "testdata", "legacy")

func TestNodeAgreesOnMigratedSets(t *testing.T) {
	t.Parallel()
	node(t)
	var dirs []string
	for _, name := range []string{"valid-openai", "valid-anthropic", "mixed-providers", "duplicate-equal"} {
		data, err := os.ReadFile(filepath.Join(legacyDir, name, "snapshots.json"))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), ".ai-snapshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "snapshots.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := migrate.Run(migrate.Options{Dir: dir, From: "0.9.0", To: snapshot.Version, Check: check.Options{Config: &check.Config{}}})
		if err != nil || !res.Done {
			t.Fatalf("migrate %s: %v", name, err)
		}
		// The freshly migrated set and the committed expected set.
		dirs = append(dirs, dir, filepath.Join(legacyDir, name, "want"))
	}
	mustAgree(t, dirs...)
}

// TestNodeAgreesOnLegacyFixtureHashes checks the 0.9.0 hashes of every
// fixture: Node agrees with Go on each, and flags exactly the edited records.
func TestNodeAgreesOnLegacyFixtureHashes(t *testing.T) {
	t.Parallel()
	node(t)
	es, err := os.ReadDir(legacyDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range es {
		dirs = append(dirs, filepath.Join(legacyDir, e.Name()))
	}
	out, err := hashcheck(t, dirs...)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1 (two fixtures are tampered), got %v:\n%s", err, out)
	}
	tampered := map[string]string{"tampered": `/snapshots/1 (id "ask-1"): legacy record hash`, "many-problems": `/snapshots/1 (id "edited"): legacy record hash`}
	for _, d := range dirs {
		name := filepath.Base(d)
		if want, ok := tampered[name]; ok {
			if !strings.Contains(out, "MISMATCH "+d+": snapshots.json "+want) {
				t.Errorf("%s: the edited record is not named:\n%s", name, out)
			}
		} else if !strings.Contains(out, " in "+d+"; every id and hash agrees") {
			t.Errorf("%s: Node disagrees:\n%s", name, out)
		}
	}
	if n := strings.Count(out, "MISMATCH"); n != len(tampered) {
		t.Errorf("%d mismatches, want %d:\n%s", n, len(tampered), out)
	}
}
