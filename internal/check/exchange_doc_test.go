package check_test

import (
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// TestFormatDocWorkedExchange: the exchange record docs/format.md shows
// passes every check verify runs (schema, id from the key, record and file
// hashes), and is byte for byte what traceforge writes.
func TestFormatDocWorkedExchange(t *testing.T) {
	md, err := os.ReadFile("../../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json worked-exchange\n(.*?)```").FindSubmatch(md)
	if m == nil {
		t.Fatal("docs/format.md lost its worked-exchange block")
	}
	block := m[1]
	s, fs := check.CheckBytes("anthropic/2c10142b17db.json", block, check.Options{Config: &check.Config{}})
	for _, f := range fs {
		if f.Severity == finding.Error {
			t.Errorf("%s", f.Error())
		}
	}
	if s == nil || s.Record.Response.Status != 200 {
		t.Fatalf("the example does not read as an exchange: %+v", s)
	}
	v, _ := snapshot.Decode(block)
	out, err := snapshot.MarshalFile(v.(map[string]any))
	if err != nil || string(out) != string(block) {
		t.Errorf("the documented file is not what traceforge writes:\n%s", out)
	}
}

// TestExchangeSchema: an exchange record with two bodies, an LLM field, a
// bad status or an endpoint that is no route is refused.
func TestExchangeSchema(t *testing.T) {
	md, _ := os.ReadFile("../../docs/format.md")
	block := regexp.MustCompile("(?s)```json worked-exchange\n(.*?)```").FindSubmatch(md)[1]
	for name, edit := range map[string]func(rec map[string]any){
		"two bodies":   func(rec map[string]any) { rec["request"].(map[string]any)["body_text"] = "x" },
		"content":      func(rec map[string]any) { rec["response"].(map[string]any)["content"] = "x" },
		"status 700":   func(rec map[string]any) { rec["response"].(map[string]any)["status"] = int64(700) },
		"no status":    func(rec map[string]any) { delete(rec["response"].(map[string]any), "status") },
		"occurrence 0": func(rec map[string]any) { rec["occurrence"] = int64(0) },
		"other route":  func(rec map[string]any) { rec["endpoint"] = "POST /v1/moderations" },
	} {
		v, _ := snapshot.Decode(block)
		doc := v.(map[string]any)
		rec := doc["snapshots"].([]any)[0].(map[string]any)
		edit(rec)
		_ = snapshot.Rehash(rec)
		doc["hash"], _ = snapshot.FileHash(snapshot.Version, []string{rec["hash"].(string)})
		if _, fs := check.CheckDocument("anthropic/2c10142b17db.json", "anthropic", doc, check.Options{Config: &check.Config{}}); fs.Errors() == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSecretInBase64Body: a key inside an exchange's base64 body (a
// multipart upload of a file holding it) is found like any other string.
func TestSecretInBase64Body(t *testing.T) {
	md, _ := os.ReadFile("../../docs/format.md")
	block := regexp.MustCompile("(?s)```json worked-exchange\n(.*?)```").FindSubmatch(md)[1]
	v, _ := snapshot.Decode(block)
	doc := v.(map[string]any)
	rec := doc["snapshots"].([]any)[0].(map[string]any)
	req := rec["request"].(map[string]any)
	delete(req, "body")
	key := "sk-ant-api03-" + strings.Repeat("a", 93) + "AA"
	req["body_b64"] = base64.StdEncoding.EncodeToString([]byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nANTHROPIC_API_KEY=" + key + "\x00\xff\r\n--b--\r\n"))
	_ = snapshot.Rehash(rec)
	doc["hash"], _ = snapshot.FileHash(snapshot.Version, []string{rec["hash"].(string)})
	_, fs := check.CheckDocument("anthropic/2c10142b17db.json", "anthropic", doc, check.Options{Config: &check.Config{}})
	found := false
	for _, f := range fs {
		if f.Rule == check.RuleSecret && f.Pointer == "/snapshots/0/request/body_b64" {
			found = true
		}
		if strings.Contains(f.Message, key) {
			t.Errorf("a finding quotes the key: %s", f.Message)
		}
	}
	if !found {
		t.Fatalf("the key in the base64 body was not found: %v", fs)
	}
}
