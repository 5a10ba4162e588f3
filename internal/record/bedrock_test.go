package record_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/bedrock"
	"github.com/traceforge/traceforge/internal/provider/preset"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// The credentials of the test: the application's (what its SDK signs
// with, for traceforge's host) and traceforge's own (what the fake
// upstream accepts).
const (
	appKeyID      = "AKIDAPPLICATION"
	appSecret     = "application-secret-value"
	tfKeyID       = "AKIDTRACEFORGE"
	tfSecret      = "traceforge-secret-value"
	bedrockModel  = "anthropic.claude-3-haiku-20240307-v1:0"
	bedrockEscape = "anthropic.claude-3-haiku-20240307-v1%3A0"
)

// bedrockEnv gives traceforge the fake's credentials and keeps the default
// chain away from shared files and the instance metadata endpoint.
func bedrockEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ACCESS_KEY_ID", tfKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", tfSecret)
	t.Setenv("AWS_REGION", "eu-west-1")
}

func startBedrock(t *testing.T) *fakeupstream.Bedrock {
	t.Helper()
	f, err := fakeupstream.StartBedrock(fakeupstream.BedrockOptions{AccessKeyID: tfKeyID, SecretAccessKey: tfSecret, Region: "us-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// signedCall sends body to url signed the way an AWS SDK signs it: SigV4
// for the host it calls, with the application's credentials and a session
// token.
func signedCall(t *testing.T, url string, body []byte, hdr map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Traceforge-Source", srcHeader)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if req.Header.Get("Authorization") == "" {
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: appKeyID, SecretAccessKey: appSecret, SessionToken: "app-session-token"}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "bedrock", "us-west-2", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func converseBody(prompt string, tools bool) []byte {
	req := map[string]any{
		"messages":        []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": prompt}}}},
		"inferenceConfig": map[string]any{"temperature": 0, "maxTokens": 100},
	}
	if tools {
		req["toolConfig"] = map[string]any{"tools": []any{map[string]any{"toolSpec": map[string]any{
			"name": "get_weather", "description": "weather",
			"inputSchema": map[string]any{"json": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}}}
	}
	b, _ := json.Marshal(req)
	return b
}

// TestBedrockRecordResigns: a Converse call, a ConverseStream call and a
// tool call signed by the application for traceforge's host are signed
// anew with traceforge's credentials (the fake upstream verifies every
// signature), pass through (the stream frame for frame), and become
// snapshots under bedrock/ that verify, keyed by the decoded model id,
// with no credential or signature of either side on disk.
func TestBedrockRecordResigns(t *testing.T) {
	bedrockEnv(t)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Upstreams[bedrock.Name] = fake.URL
	})

	r := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/converse", converseBody("hello there", false), nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"text":"Echo: hello there"`) {
		t.Fatalf("converse: %d %s", r.status, r.body)
	}
	last := fake.LastRequest()
	if got := last.Header.Get("Authorization"); !strings.Contains(got, "Credential="+tfKeyID+"/") || !strings.Contains(got, "/us-west-2/bedrock/aws4_request") {
		t.Fatalf("upstream Authorization %q: want traceforge's key, the client's region", got)
	}
	if last.Header.Get("X-Amz-Security-Token") != "" || last.Header.Get("X-Traceforge-Source") != "" {
		t.Fatalf("upstream headers %v", last.Header)
	}

	stream := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/converse-stream", converseBody("stream me please", false), nil)
	if stream.status != 200 || !bedrock.IsEventStream(stream.header.Get("Content-Type")) {
		t.Fatalf("converse-stream: %d %s", stream.status, stream.header.Get("Content-Type"))
	}
	var text strings.Builder
	dec := eventstream.NewDecoder()
	rd := bytes.NewReader(stream.body)
	frames := 0
	for rd.Len() > 0 {
		msg, err := dec.Decode(rd, nil)
		if err != nil {
			t.Fatalf("frame %d: %v", frames, err)
		}
		frames++
		if msg.Headers.Get(":event-type").String() == "contentBlockDelta" {
			var ev struct {
				Delta struct{ Text string } `json:"delta"`
			}
			_ = json.Unmarshal(msg.Payload, &ev)
			text.WriteString(ev.Delta.Text)
		}
	}
	if text.String() != "Echo: stream me please" || frames < 6 {
		t.Fatalf("stream text %q in %d frames", text.String(), frames)
	}

	tool := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/converse", converseBody("What is the weather in Paris?", true), nil)
	if tool.status != 200 || !strings.Contains(string(tool.body), `"toolUse"`) {
		t.Fatalf("tool: %d %s", tool.status, tool.body)
	}
	if fake.Signed() != 3 {
		t.Fatalf("the fake verified %d of 3 signatures", fake.Signed())
	}

	s := p.finish()
	if s.Failed() {
		t.Fatalf("summary:\n%s", summaryText(s))
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 3 {
		t.Fatalf("%d snapshots: %v", len(snaps), snaps)
	}
	var sawStream, sawTool bool
	for rel, data := range snaps {
		if !strings.HasPrefix(rel, "bedrock/") {
			t.Errorf("%s outside bedrock/", rel)
		}
		for _, secret := range []string{appKeyID, appSecret, tfKeyID, tfSecret, "app-session-token", "AWS4-HMAC-SHA256", "Signature="} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %q", rel, secret)
			}
		}
		rec := readRecord(t, data)
		if rec["endpoint"] != "/model/"+bedrockModel+"/converse" {
			t.Errorf("%s: endpoint %v", rel, rec["endpoint"])
		}
		req := rec["request"].(map[string]any)
		if req["model"] != bedrockModel {
			t.Errorf("%s: model %v", rel, req["model"])
		}
		resp := rec["response"].(map[string]any)
		if resp["stream"] == true {
			sawStream = true
			if resp["content"] != "Echo: stream me please" || resp["finish_reason"] != "end_turn" {
				t.Errorf("%s: streamed response %v", rel, resp)
			}
		}
		if tc, ok := resp["tool_calls"].([]any); ok {
			sawTool = true
			calls := provider.ToolCalls(tc)
			if len(calls) != 1 || calls[0].Name != "get_weather" || resp["finish_reason"] != "tool_use" {
				t.Errorf("%s: tool calls %v", rel, tc)
			}
		}
	}
	if !sawStream || !sawTool {
		t.Errorf("stream %v, tool %v", sawStream, sawTool)
	}
	verifySet(t, dir)
}

// TestBedrockBearerPassesThrough: a Bedrock API key goes to the upstream
// as the application sent it, nothing is signed, and the key is stored
// nowhere.
func TestBedrockBearerPassesThrough(t *testing.T) {
	bedrockEnv(t)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Upstreams[bedrock.Name] = fake.URL
	})
	key := "ABSK" + strings.Repeat("QmVkcm9ja0FQSUtleQ", 7)
	r := signedCall(t, p.srv.URL+"/model/amazon.nova-lite-v1:0/converse", converseBody("hi", false), map[string]string{"Authorization": "Bearer " + key})
	if r.status != 200 || fake.Bearer() != 1 || fake.Signed() != 0 {
		t.Fatalf("%d %s (bearer %d, signed %d)", r.status, r.body, fake.Bearer(), fake.Signed())
	}
	if got := fake.LastRequest().Header.Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("upstream Authorization %q", got)
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("summary:\n%s", summaryText(s))
	}
	for rel, data := range files(t, dir) {
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("%s holds the Bedrock API key", rel)
		}
	}
	verifySet(t, dir)
}

// TestBedrockWithoutCredentialsFails: when traceforge has no AWS
// credentials, a signed call is answered 502 in Bedrock's error shape,
// nothing reaches the upstream, and the run lists the call.
func TestBedrockWithoutCredentialsFails(t *testing.T) {
	bedrockEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Upstreams[bedrock.Name] = fake.URL
	})
	r := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/converse", converseBody("hello", false), nil)
	if r.status != http.StatusBadGateway || !strings.Contains(string(r.body), `"__type"`) || fake.Requests() != 0 {
		t.Fatalf("%d %s (upstream saw %d)", r.status, r.body, fake.Requests())
	}
	if s := p.finish(); !s.Failed() {
		t.Fatalf("the run did not fail:\n%s", summaryText(s))
	}
}

// TestBedrockRecordOverH2C: the recording server, as the CLI serves it
// (serve.Start), takes a signed Converse call over HTTP/2 with prior
// knowledge — how @aws-sdk/client-bedrock-runtime talks to an http://
// endpoint — and records it re-signed.
func TestBedrockRecordOverH2C(t *testing.T) {
	bedrockEnv(t)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	rec, err := record.New(record.Config{Dir: dir, ManifestInterval: -1, Log: io.Discard,
		Upstreams: map[provider.Name]string{bedrock.Name: fake.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve.Start(ln, serve.Guard(rec.Handler(), nil, record.Refuse))
	body := converseBody("over h2c", false)
	req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/model/"+bedrockEscape+"/converse", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Traceforge-Source", srcHeader)
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: appKeyID, SecretAccessKey: appSecret}, req, hex.EncodeToString(sum[:]), "bedrock", "us-west-2", time.Now()); err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Stop(time.Second)
	s := rec.Finish()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !strings.Contains(string(got), "Echo: over h2c") || fake.Signed() != 1 {
		t.Fatalf("%s %d %s (signed %d)", resp.Proto, resp.StatusCode, got, fake.Signed())
	}
	if s.Failed() || len(snapshots(t, dir)) != 1 {
		t.Fatalf("summary:\n%s", summaryText(s))
	}
	verifySet(t, dir)
}

// TestBedrockInvokeAnthropic: InvokeModel with Claude's Messages body,
// plain and as an event stream of base64 chunks, is re-signed, passed
// through and recorded under /model/{id}/invoke with Anthropic's fields.
func TestBedrockInvokeAnthropic(t *testing.T) {
	bedrockEnv(t)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Upstreams[bedrock.Name] = fake.URL
	})
	body := func(prompt string) []byte {
		b, _ := json.Marshal(map[string]any{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 50, "temperature": 0,
			"messages": []any{map[string]any{"role": "user", "content": prompt}}})
		return b
	}
	r := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/invoke", body("invoke me"), nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"text":"Echo: invoke me"`) {
		t.Fatalf("invoke: %d %s", r.status, r.body)
	}
	s := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/invoke-with-response-stream", body("stream invoke"), nil)
	if s.status != 200 || !bedrock.IsEventStream(s.header.Get("Content-Type")) {
		t.Fatalf("invoke stream: %d %s %s", s.status, s.header.Get("Content-Type"), s.body)
	}
	if fake.Signed() != 2 {
		t.Fatalf("signed %d", fake.Signed())
	}
	if sum := p.finish(); sum.Failed() {
		t.Fatalf("summary:\n%s", summaryText(sum))
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for rel, data := range snaps {
		rec := readRecord(t, data)
		resp := rec["response"].(map[string]any)
		if rec["endpoint"] != "/model/"+bedrockModel+"/invoke" || !strings.HasPrefix(resp["content"].(string), "Echo: ") || resp["finish_reason"] != "end_turn" {
			t.Errorf("%s: %v %v", rel, rec["endpoint"], resp)
		}
	}
	verifySet(t, dir)
}

// TestBedrockDefaults: under `traceforge init`'s deterministic preset, the
// SDK's default Converse call (no inferenceConfig) and InvokeModel call
// (no temperature) are completed — temperature 0 and a max-tokens value
// under each API's own field — re-signed over the completed body, and
// recorded with defaults_applied.
func TestBedrockDefaults(t *testing.T) {
	bedrockEnv(t)
	cfg := presetConfig(t, preset.Deterministic)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Check.Config = cfg
		c.Upstreams[bedrock.Name] = fake.URL
	})
	calls := []struct {
		path, body string
		want       map[string]string // JSON pointer → value the upstream must get
	}{
		{"/converse", `{"messages":[{"role":"user","content":[{"text":"defaults please"}]}]}`,
			map[string]string{"inferenceConfig.temperature": "0", "inferenceConfig.maxTokens": "4096"}},
		{"/invoke", `{"anthropic_version":"bedrock-2023-05-31","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`,
			map[string]string{"temperature": "0", "max_tokens": "20"}},
	}
	for _, c := range calls {
		r := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+c.path, []byte(c.body), nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", c.path, r.status, r.body)
		}
		var sent map[string]any
		if err := json.Unmarshal(fake.LastRequest().Body, &sent); err != nil {
			t.Fatal(err)
		}
		for ptr, want := range c.want {
			var v any = sent
			for _, k := range strings.Split(ptr, ".") {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			if got, _ := json.Marshal(v); string(got) != want {
				t.Errorf("%s: upstream %s = %s, want %s", c.path, ptr, got, want)
			}
		}
	}
	if fake.Signed() != 2 {
		t.Fatalf("signed %d: the completed bodies were not re-signed", fake.Signed())
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("summary:\n%s", summaryText(s))
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for rel, data := range snaps {
		if got := defaults.AppliedOf(readRecord(t, data)); len(got) == 0 {
			t.Errorf("%s: no defaults_applied", rel)
		}
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Findings {
		t.Errorf("static verification under the preset: %s", f.Error())
	}
}

// TestBedrockCountTokens: CountTokens is an exchange of Bedrock's (the model
// id's ":" kept in its route), re-signed for its upstream and recorded as an
// exchange record under bedrock/.
func TestBedrockCountTokens(t *testing.T) {
	bedrockEnv(t)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Upstreams[bedrock.Name] = fake.URL
	})
	body := []byte(`{"input":{"converse":{"messages":[{"role":"user","content":[{"text":"count these four words"}]}]}}}`)
	r := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/count-tokens", body, nil)
	if r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"inputTokens":4}` || fake.Signed() != 1 {
		t.Fatalf("%d %s (signed %d)", r.status, r.body, fake.Signed())
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("summary:\n%s", summaryText(s))
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for rel, data := range snaps {
		rec := readRecord(t, data)
		if !strings.HasPrefix(rel, "bedrock/") || rec["endpoint"] != "POST /model/"+bedrockModel+"/count-tokens" {
			t.Errorf("%s: endpoint %v", rel, rec["endpoint"])
		}
		for _, secret := range []string{"AWS4-HMAC-SHA256", appKeyID, tfKeyID} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %s", rel, secret)
			}
		}
	}
	verifySet(t, dir)
}

// TestBedrockUnsignedCallIsRefused (SECURITY.md): traceforge signs Bedrock
// calls with its own AWS credentials only for a client that signed its
// call (or carries a Bedrock API key): a call with no credential at all —
// any local process that found the port — is refused 403 in Bedrock's
// error shape, nothing reaches the upstream, and the run fails naming it.
func TestBedrockUnsignedCallIsRefused(t *testing.T) {
	bedrockEnv(t)
	fake := startBedrock(t)
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, func(c *record.Config) {
		c.Upstreams[bedrock.Name] = fake.URL
	})
	for _, path := range []string{"/model/" + bedrockEscape + "/converse", "/model/" + bedrockEscape + "/count-tokens"} {
		req, _ := http.NewRequest(http.MethodPost, p.srv.URL+path, bytes.NewReader(converseBody("borrow your keys", false)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Traceforge-Source", srcHeader)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"__type"`) || !strings.Contains(string(body), "carries no Amazon Bedrock credential") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	if fake.Requests() != 0 {
		t.Fatalf("the upstream got %d request(s)", fake.Requests())
	}
	// A signed call in the same run is still signed again and forwarded.
	if r := signedCall(t, p.srv.URL+"/model/"+bedrockEscape+"/converse", converseBody("hello", false), nil); r.status != 200 || fake.Signed() != 1 {
		t.Fatalf("signed call: %d %s", r.status, r.body)
	}
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindNoCredential) || len(files(t, dir)) == 0 {
		t.Fatalf("want a failed run listing no-credential:\n%s", summaryText(s))
	}
}
