package registry_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/normalize"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// TestFormatDocNormalizers checks the key-normalizer worked example and the
// built-in patterns of docs/format.md against the code.
func TestFormatDocNormalizers(t *testing.T) {
	md, err := os.ReadFile("../../../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	re := regexp.MustCompile("(?s)```(?:json|text) (normalize-[a-z-]+)\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(string(md), -1) {
		blocks[m[1]] = strings.TrimSpace(m[2])
	}
	for _, name := range []string{"normalize-config", "normalize-request", "normalize-key-object", "normalize-key", "normalize-key-normalizers"} {
		if _, ok := blocks[name]; !ok {
			t.Fatalf("docs/format.md lost its %s block", name)
		}
	}
	cfg, err := check.ParseConfig([]byte(blocks["normalize-config"]))
	if err != nil {
		t.Fatal(err)
	}
	kc := cfg.KeyContext()
	req, err := registry.ParseWith("POST", "/v1/chat/completions", nil, []byte(blocks["normalize-request"]), kc)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := registry.KeyObject("openai", req.Endpoint, req.Body, nil, kc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := snapshot.Canonical(obj)
	if string(b) != blocks["normalize-key-object"] {
		t.Errorf("key object:\n got %s\nwant %s", b, blocks["normalize-key-object"])
	}
	if req.Key != blocks["normalize-key"] {
		t.Errorf("key %s, doc says %s", req.Key, blocks["normalize-key"])
	}
	plain, _ := registry.Parse("POST", "/v1/chat/completions", nil, []byte(blocks["normalize-request"]))
	for _, id := range []string{req.ID(), plain.ID()} {
		if !strings.Contains(string(md), "`"+id+"`") {
			t.Errorf("the doc does not name id %s", id)
		}
	}
	rec, _, err := registry.NewRecord("openai", req.Endpoint, time.Unix(0, 0), source.Source{File: "a.go", Line: 1, Function: "f"}, req.Body, nil,
		snapshot.Response{Fields: snapshot.Fields{Content: "x", TokensUsed: 1, FinishReason: "stop"}}, kc)
	if err != nil {
		t.Fatal(err)
	}
	kn, _ := snapshot.Canonical(rec["key_normalizers"])
	want := strings.NewReplacer(`"key_normalizers": `, "", " ", "").Replace(blocks["normalize-key-normalizers"])
	if string(kn) != want {
		t.Errorf("key_normalizers %s, doc says %s", kn, want)
	}
	// The table copies every built-in pattern (| escaped for Markdown).
	for _, name := range []string{"iso-datetime", "date", "uuid", "ulid", "unix-ms"} {
		p, _ := normalize.BuiltinPattern(name)
		if !strings.Contains(string(md), "`"+strings.ReplaceAll(p, "|", `\|`)+"` with `<"+name+">`") {
			t.Errorf("docs/format.md does not copy the %s pattern %s", name, p)
		}
	}
}
