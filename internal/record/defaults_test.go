package record_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/preset"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// presetConfig is the config `traceforge init` writes for kind.
func presetConfig(t *testing.T, kind preset.Kind) *check.Config {
	t.Helper()
	p, ok := preset.Get(kind)
	if !ok {
		t.Fatalf("no preset %s", kind)
	}
	cfg, err := check.ParseConfig([]byte(`{"defaults": ` + p.DefaultsJSON("") + `, "exceptions": ` + p.ExceptionsJSON("") + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := snapshot.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	v, err := snapshot.Decode(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v.(map[string]any)
}

// defaultCall is an official SDK's default call on one endpoint: neither
// temperature nor a seed nor max tokens (Anthropic's SDK requires
// max_tokens, so it is the one member its default call has).
type defaultCall struct {
	name, path string
	body       string
	applied    []string
	// inPath: the model is in the path, not the body (Gemini), so the
	// stored request has it and the upstream body does not.
	inPath bool
}

var defaultCalls = []defaultCall{
	{name: "chat", path: "/v1/chat/completions",
		body:    `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi"}]}`,
		applied: []string{"/max_completion_tokens", "/seed", "/temperature"}},
	{name: "chat with a slash model", path: "/v1/chat/completions",
		body:    `{"model":"meta-llama/Llama-3.3-70B-Instruct","messages":[{"role":"user","content":"Say hi"}]}`,
		applied: []string{"/max_tokens", "/seed", "/temperature"}},
	{name: "chat streamed", path: "/v1/chat/completions",
		body:    `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hi, streamed"}]}`,
		applied: []string{"/max_completion_tokens", "/seed", "/temperature"}},
	{name: "reasoning model", path: "/v1/chat/completions",
		body:    `{"model":"o3-mini","messages":[{"role":"user","content":"Think"}]}`,
		applied: []string{"/max_completion_tokens", "/temperature"}},
	{name: "completions", path: "/v1/completions",
		body:    `{"model":"gpt-3.5-turbo-instruct","prompt":"Say hi"}`,
		applied: []string{"/max_tokens", "/seed", "/temperature"}},
	{name: "responses", path: "/v1/responses",
		body:    `{"model":"gpt-4o-mini","input":"Say hi"}`,
		applied: []string{"/max_output_tokens", "/temperature"}},
	{name: "anthropic", path: "/v1/messages",
		body:    `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Say hi"}]}`,
		applied: []string{"/temperature"}},
	{name: "anthropic thinking", path: "/v1/messages",
		body:    `{"model":"claude-sonnet-4-5","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"Think"}]}`,
		applied: []string{"/temperature"}},
	{name: "gemini", path: "/v1beta/models/gemini-2.5-flash:generateContent", inPath: true,
		body:    `{"contents":[{"role":"user","parts":[{"text":"Say hi"}]}]}`,
		applied: []string{"/generationConfig/maxOutputTokens", "/generationConfig/seed", "/generationConfig/temperature"}},
	{name: "ollama", path: "/api/chat",
		body:    `{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"Say hi"}]}`,
		applied: []string{"/options/num_predict", "/options/seed", "/options/temperature"}},
}

// TestRecordAppliesDefaults: after `traceforge init` (the deterministic
// preset), the default call of every served endpoint records without a
// code change; the upstream receives the app's bytes plus the defaults, the
// stored request is exactly what the upstream received, defaults_applied
// lists the members set, the set verifies, and the app's unchanged request
// is keyed onto the snapshot by replay.
func TestRecordAppliesDefaults(t *testing.T) {
	cfg := presetConfig(t, preset.Deterministic)
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) {
		c.Check.Config = cfg
		c.Upstreams[provider.Gemini] = fake.URL
		c.Upstreams[provider.Ollama] = fake.URL
	})
	ids := map[string]string{}
	for _, c := range defaultCalls {
		send := func() (reply, error) { return sendRaw(p.srv.URL+c.path, c.body) }
		if c.inPath {
			send = func() (reply, error) { return sendRawKey(p.srv.URL+c.path, c.body, "x-goog-api-key", geminiKey) }
		}
		r, err := send()
		if err != nil || r.status != 200 {
			t.Fatalf("%s: %v %d %s", c.name, err, r.status, r.body)
		}
		id := r.header.Get(provider.HeaderSnapshotID)
		ids[c.name] = id
		sent := fake.LastRequest().Body
		// Every byte the app sent is kept: only members are added.
		if !bytes.HasPrefix(sent, []byte(strings.TrimSuffix(c.body, "}"))) && !strings.Contains(c.body, `"stream":true`) {
			t.Errorf("%s: upstream body %s does not keep the app's bytes %s", c.name, sent, c.body)
		}
		data := snapshots(t, dir)[snapshot.RelPath(providerOf(c.path), id)]
		if data == nil {
			t.Fatalf("%s: no snapshot %s", c.name, id)
		}
		rec := readRecord(t, data)
		stored := rec["request"].(map[string]any)
		upstream := decodeObject(t, sent)
		if c.inPath {
			delete(stored, "model")
		}
		delete(upstream, "stream_options") // the proxy's own include_usage is never stored (DESIGN §11)
		if canonical(t, stored) != canonical(t, upstream) {
			t.Errorf("%s: stored request %s, the upstream received %s", c.name, canonical(t, stored), canonical(t, upstream))
		}
		if got := defaults.AppliedOf(rec); !reflect.DeepEqual(got, c.applied) {
			t.Errorf("%s: defaults_applied %v, want %v", c.name, got, c.applied)
		}
	}
	s := p.finish()
	if s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	if s.Defaulted != len(defaultCalls) {
		t.Errorf("summary: %d call(s) defaulted, want %d", s.Defaulted, len(defaultCalls))
	}
	if !strings.Contains(summaryText(s), "request defaults completed 10 call(s): /max_completion_tokens ×3, /seed ×4, /temperature ×8, /max_tokens ×2, /max_output_tokens ×1, /generationConfig/maxOutputTokens ×1") {
		t.Errorf("summary does not count the defaults:\n%s", summaryText(s))
	}

	// The set verifies under the config, the reasoning and thinking calls
	// by their policy exceptions.
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	excepted := 0
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			t.Errorf("static verification: %s", f.Error())
		}
		if f.Rule == check.RulePolicy {
			excepted++
		}
	}
	if excepted != 2 {
		t.Errorf("%d snapshot(s) nondeterministic by policy, want 2 (o3-mini, thinking)", excepted)
	}

	// Replay: the app's unchanged request hits its snapshot.
	ix := replay.NewIndex(set)
	for _, c := range defaultCalls {
		req, err := registry.ParseWith(http.MethodPost, c.path, http.Header{}, []byte(c.body), ix.KeyContext())
		if err != nil {
			t.Fatal(err)
		}
		s := ix.LookupRequest(req)
		if s == nil || s.ID != ids[c.name] {
			t.Errorf("%s: replay of the unchanged request found %v, want %s", c.name, s, ids[c.name])
		}
	}
	// Without the config, the same request is a miss (the defaults are in the key).
	req, _ := registry.ParseWith(http.MethodPost, defaultCalls[0].path, http.Header{}, []byte(defaultCalls[0].body), nil)
	if ix.LookupRequest(req) != nil {
		t.Error("the request without its defaults matched a snapshot")
	}
}

// TestRecordDefaultsKeepPresentValues: a member the app sends is never
// changed, an explicit null is completed, and a call the defaults do not
// complete is refused with the rule that would.
func TestRecordDefaultsKeepPresentValues(t *testing.T) {
	cfg, err := check.ParseConfig([]byte(`{"defaults": [{"model": "gpt-4o*", "endpoint": "/v1/chat/completions", "set": {"/temperature": 0.5, "/seed": 1, "/max_completion_tokens": 64}}],
		"exceptions": [{"model": "gpt-4o*", "relax": ["temperature"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Check.Config = cfg })
	body := `{"model":"gpt-4o","temperature":0,"seed":null,"messages":[{"role":"user","content":"hi"}]}`
	r, err := sendRaw(p.srv.URL+"/v1/chat/completions", body)
	if err != nil || r.status != 200 {
		t.Fatalf("%v %d %s", err, r.status, r.body)
	}
	want := `{"model":"gpt-4o","temperature":0,"seed":1,"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":64}`
	if got := string(fake.LastRequest().Body); got != want {
		t.Errorf("upstream got %s, want %s", got, want)
	}
	// A model no rule matches: forwarded as sent, refused with the rule.
	body = `{"model":"gpt-3.5-turbo","messages":[{"role":"user","content":"hi"}]}`
	if r, err := sendRaw(p.srv.URL+"/v1/chat/completions", body); err != nil || r.status != 200 {
		t.Fatalf("%v %d %s", err, r.status, r.body)
	}
	if got := string(fake.LastRequest().Body); got != body {
		t.Errorf("upstream got %s, want the app's body unchanged", got)
	}
	s := p.finish()
	text := summaryText(s)
	if s.Refused != 1 || !strings.Contains(text, `add {"model": "gpt-3.5-turbo", "endpoint": "/v1/chat/completions", "set": {"/temperature": 0}} to "defaults" in .traceforge.json`) {
		t.Errorf("the refusal does not name the defaults rule:\n%s", text)
	}
}

// sendRaw posts body verbatim, with a source header and an OpenAI key.
func sendRaw(url, body string) (reply, error) {
	return sendRawKey(url, body, "Authorization", "Bearer "+testKey)
}

// sendRawKey posts body verbatim with a source header and the key header.
func sendRawKey(url, body, keyHeader, key string) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(keyHeader, key)
	req.Header.Set("X-Traceforge-Source", srcHeader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b.Bytes()}, err
}

func providerOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/messages"):
		return "anthropic"
	case strings.HasPrefix(path, "/v1beta/"):
		return "gemini"
	case strings.HasPrefix(path, "/api/"):
		return "ollama"
	}
	return "openai"
}
