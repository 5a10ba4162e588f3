package migrate

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// legacySet builds an in-memory 0.9.0 set; records are hashed unless they
// already carry a hash.
func legacySet(t *testing.T, records ...map[string]any) *Set {
	t.Helper()
	list := make([]any, 0, len(records))
	for _, r := range records {
		b, err := snapshot.MarshalPretty(r)
		if err != nil {
			t.Fatal(err)
		}
		v, err := snapshot.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		m := v.(map[string]any)
		if _, ok := m["hash"]; !ok {
			h, err := LegacyRecordHash(m)
			if err != nil {
				t.Fatal(err)
			}
			m["hash"] = h
		}
		list = append(list, m)
	}
	data, err := snapshot.MarshalPretty(map[string]any{"version": "0.9.0", "snapshots": list})
	if err != nil {
		t.Fatal(err)
	}
	return &Set{Version: "0.9.0", Files: map[string][]byte{LegacyFile: data}}
}

func env() Env {
	return Env{Now: testNow, Display: display, Check: check.Options{Config: &check.Config{}}}
}

func good() map[string]any {
	return rec("r", "openai", "2026-01-09T10:30:00Z", summarize,
		openaiReq(msgs("user", "hello")), resp("hi", 3, 10, "stop"))
}

func with(m map[string]any, path string, v any) map[string]any {
	b, _ := snapshot.MarshalPretty(m)
	c, _ := snapshot.Decode(b)
	cur := c.(map[string]any)
	parts := strings.Split(path, "/")
	for _, p := range parts[:len(parts)-1] {
		cur = cur[p].(map[string]any)
	}
	if v == nil {
		delete(cur, parts[len(parts)-1])
	} else {
		cur[parts[len(parts)-1]] = v
	}
	return c.(map[string]any)
}

func TestLegacyRecordProblems(t *testing.T) {
	tests := []struct {
		name   string
		rec    map[string]any
		rules  []string
		detail string
	}{
		{"unknown record field", with(good(), "tags", []any{"x"}), []string{RuleLegacyFormat}, `unknown field "tags"`},
		{"tool_calls in response", with(good(), "response/tool_calls", []any{}), []string{RuleLegacyFormat}, "response.tool_calls is not part of format 0.9.0"},
		{"tokens_used instead of tokens", with(with(good(), "response/tokens", nil), "response/tokens_used", 3), []string{RuleLegacyFormat, RuleLegacyFormat}, "unknown field response.tokens_used"},
		{"missing provider", with(good(), "provider", nil), []string{RuleLegacyFormat}, `required field "provider" is missing`},
		{"bad timestamp", with(good(), "timestamp", "yesterday"), []string{RuleLegacyFormat}, `timestamp "yesterday" is not an RFC 3339 date-time`},
		{"line zero", with(good(), "source/line", 0), []string{RuleLegacyFormat}, "source.line must be an integer ≥ 1"},
		{"function not a string", with(good(), "source/function", 7), []string{RuleLegacyFormat}, "source.function must be a string"},
		{"prefixed hash", with(good(), "hash", "sha256:"+strings.Repeat("a", 64)), []string{RuleLegacyFormat}, "is not a 0.9.0 hash"},
		{"no hash", good(), []string{RuleTampered}, "has no hash"},
		{"absolute source file", with(good(), "source/file", "/home/me/app.py"), []string{check.RuleSource}, "is an absolute path"},
		{"request not schema-valid", with(good(), "request/messages", "hello"), []string{check.RuleSchema}, "must be an array"},
		{"function_call finish", with(good(), "response/finish_reason", "function_call"), []string{RuleToolCall}, `finish_reason "function_call"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := legacySet(t, tt.rec)
			if tt.name == "no hash" {
				set.Files[LegacyFile] = bytes.Replace(set.Files[LegacyFile], []byte(`"hash": `), []byte(`"nohash": `), 1)
			}
			out, rep, err := migrateLegacy(set, env())
			if err != nil {
				t.Fatal(err)
			}
			if out != nil {
				t.Fatal("a set with problems produced output")
			}
			got := rulesOf(rep.Problems)
			want := append([]string(nil), tt.rules...)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("rules = %v, want %v: %v", got, want, rep.Problems)
			}
			if !strings.Contains(rep.Problems[0].Message, tt.detail) {
				t.Errorf("message %q lacks %q", rep.Problems[0].Message, tt.detail)
			}
			if rep.Problems[0].Subject != `#0 "r"` || !strings.HasPrefix(rep.Problems[0].Pointer, "/snapshots/0") {
				t.Errorf("problem not tied to the record: %+v", rep.Problems[0])
			}
		})
	}
}

func TestLegacyDocumentProblems(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":        `{"version": "0.9.0", "snapshots": [`,
		"extra top field": `{"version": "0.9.0", "snapshots": [], "hash": "x"}`,
		"no snapshots":    `{"version": "0.9.0"}`,
		"array":           `[]`,
		"record string":   `{"version": "0.9.0", "snapshots": ["x"]}`,
	} {
		_, rep, err := migrateLegacy(&Set{Version: "0.9.0", Files: map[string][]byte{LegacyFile: []byte(doc)}}, env())
		if err != nil || len(rep.Problems) == 0 {
			t.Errorf("%s: err=%v problems=%v", name, err, rep.Problems)
		}
	}
}

func TestEmptyLegacySet(t *testing.T) {
	out, rep, err := migrateLegacy(legacySet(t), env())
	if err != nil || len(rep.Problems) > 0 {
		t.Fatal(err, rep.Problems)
	}
	if want := []string{snapshot.ManifestName}; !reflect.DeepEqual(out.Rels(), want) {
		t.Errorf("files = %v", out.Rels())
	}
}

func TestPolicyExceptionFromConfig(t *testing.T) {
	hot := rec("hot", "openai", "2026-01-09T10:39:00Z", src("app/creative.py", 9, "poem"),
		map[string]any{"model": "o3-mini", "messages": msgs("user", "Write a haiku."), "temperature": 1, "max_tokens": 60},
		resp("Silent snapshot waits", 20, 700, "stop"))
	e := env()
	if _, rep, _ := migrateLegacy(legacySet(t, hot), e); len(rep.Problems) != 2 {
		t.Fatalf("without an exception: %v", rep.Problems)
	}
	e.Check.Config = &check.Config{Exceptions: []check.Exception{{Model: "o3*", Relax: []string{"temperature", "seed"}}}}
	out, rep, err := migrateLegacy(legacySet(t, hot), e)
	if err != nil || len(rep.Problems) > 0 || out == nil {
		t.Fatalf("with an exception: %v %v", err, rep.Problems)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "nondeterministic by policy") {
		t.Errorf("notes = %v", rep.Notes)
	}
}

func TestSecretIsRefusedAndRedacted(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Ab3xY9Zq7W", 9) + "Ab3" + "AA"
	r := with(good(), "request/messages", msgs("user", "my key is "+key))
	_, rep, err := migrateLegacy(legacySet(t, r), env())
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(rep.Problems); !reflect.DeepEqual(got, []string{check.RuleSecret}) {
		t.Fatalf("rules = %v", got)
	}
	res := &result.MigratePlan{Display: display, From: "0.9.0", To: "1.0.0", DryRun: true, Steps: []*result.MigrateStep{rep}, Problems: rep.Problems}
	var b bytes.Buffer
	render.Migrate(&b, res)
	if strings.Contains(b.String(), key) || !strings.Contains(b.String(), "[secret]") {
		t.Errorf("plan leaks the key or misses the problem:\n%s", b.String())
	}
}
