package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
)

// The e2e's AWS credentials: the application's (it signs for traceforge's
// host with them) and traceforge's own, the only ones the fake Bedrock
// accepts — so every call that reaches it was signed again by traceforge.
const (
	e2eAppKeyID  = "AKIDE2EAPPLICATION"
	e2eAppSecret = "e2e-application-secret"
	e2eTFKeyID   = "AKIDE2ETRACEFORGE"
	e2eTFSecret  = "e2e-traceforge-secret"
	bedrockModel = "anthropic.claude-3-haiku-20240307-v1:0"
)

// bedrockMode is one mode of a Bedrock client: the snapshots it writes,
// their key endpoint, the client function that makes its calls and what
// that function's SDK call line holds.
type bedrockMode struct {
	calls              int
	endpoint, function string
	call               string
}

// The key endpoints: Converse and ConverseStream are keyed as /converse,
// InvokeModel and InvokeModelWithResponseStream as /invoke (the decoded
// model id in the path).
var (
	converseEndpoint = "/model/" + bedrockModel + "/converse"
	invokeEndpoint   = "/model/" + bedrockModel + "/invoke"
)

// bedrockE2E is a Bedrock end-to-end client.
type bedrockE2E struct {
	name, file string
	argv       []string // how to run it (nil: the Go client built as name)
	modes      map[string]bedrockMode
}

var bedrockClients = []bedrockE2E{
	// aws-sdk-go-v2's bedrockruntime on config.LoadDefaultConfig,
	// attributed by traceforge.SourceTransport, tapped by internal/wiretap.
	{name: "bedrockgo", file: "clients/bedrockgo/main.go", modes: map[string]bedrockMode{
		"plain":         {1, converseEndpoint, "plain", "client.Converse("},
		"stream":        {1, converseEndpoint, "stream", "client.ConverseStream("},
		"tool":          {2, converseEndpoint, "agent", "client.Converse("},
		"default":       {1, converseEndpoint, "defaultCall", "client.Converse("},
		"invoke":        {1, invokeEndpoint, "invokeModel", "client.InvokeModel("},
		"invoke-stream": {1, invokeEndpoint, "invokeStream", "client.InvokeModelWithResponseStream("},
	}},
	// @aws-sdk/client-bedrock-runtime with its defaults (HTTP/2 with prior
	// knowledge to traceforge's http:// endpoint), attributed and tapped by
	// middlewares of its own stack (node:http2, no fetch).
	{name: "bedrock-node", file: "node/bedrock.mjs", argv: []string{"node", "node/bedrock.mjs"}, modes: map[string]bedrockMode{
		"plain":         {1, converseEndpoint, "plain", "new ConverseCommand("},
		"stream":        {1, converseEndpoint, "stream", "new ConverseStreamCommand("},
		"tool":          {2, converseEndpoint, "agent", "new ConverseCommand("},
		"invoke":        {1, invokeEndpoint, "invokeModel", "new InvokeModelCommand("},
		"invoke-stream": {1, invokeEndpoint, "invokeStream", "new InvokeModelWithResponseStreamCommand("},
	}},
}

var bedrockBuild struct {
	once sync.Once
	err  error
}

// awsEnv is baseEnv without any AWS variable, the default chain kept
// from shared files and the instance metadata endpoint, plus extra.
func awsEnv(t *testing.T, extra ...string) []string {
	var env []string
	for _, kv := range baseEnv() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			continue
		}
		env = append(env, kv)
	}
	none := filepath.Join(t.TempDir(), "none")
	env = append(env, "AWS_CONFIG_FILE="+none, "AWS_SHARED_CREDENTIALS_FILE="+none, "AWS_EC2_METADATA_DISABLED=true")
	return append(env, extra...)
}

// TestBedrockClient runs the real AWS SDKs' Bedrock runtime clients —
// aws-sdk-go-v2's bedrockruntime and @aws-sdk/client-bedrock-runtime
// (Converse, ConverseStream, a tool round trip, InvokeModel and
// InvokeModelWithResponseStream with Anthropic's body) — through traceforge
// against the fake Bedrock, which checks every SigV4 signature: record (the
// app signs with its own key, the fake accepts only traceforge's) → static
// verify → offline replay with the fake stopped, no AWS credential in the
// environment (replay gives dummy ones), an identical transcript and the
// same streams event for event → drift exits 1. No key, secret or signature
// reaches the output or the snapshot folder.
func TestBedrockClient(t *testing.T) {
	setup(t)
	bedrockBuild.once.Do(func() {
		for _, c := range bedrockClients {
			if c.argv != nil {
				continue
			}
			out, err := exec.Command("go", "build", "-o", filepath.Join(bins.dir, c.name), "./"+filepath.Dir(c.file)).CombinedOutput()
			if err != nil {
				bedrockBuild.err = err
				t.Logf("%s", out)
				return
			}
		}
	})
	if bedrockBuild.err != nil {
		t.Fatalf("build the Bedrock clients: %v", bedrockBuild.err)
	}
	for _, c := range bedrockClients {
		for mode, m := range c.modes {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				bedrockRecordVerifyReplayDrift(t, c, mode, m)
			})
		}
	}
}

func bedrockRecordVerifyReplayDrift(t *testing.T, c bedrockE2E, mode string, m bedrockMode) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tf := func(args ...string) []string { return append([]string{bins.traceforge, "--dir", dir}, args...) }
	argv := []string{filepath.Join(bins.dir, c.name), mode}
	if c.argv != nil {
		argv = append(slices.Clone(c.argv), mode)
	}
	self := client{name: c.name}
	calls := m.calls

	fake, err := fakeupstream.StartBedrock(fakeupstream.BedrockOptions{AccessKeyID: e2eTFKeyID, SecretAccessKey: e2eTFSecret, Region: "us-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	// traceforge holds its own credentials; the app, started through a
	// script (so that no credential is on a command line traceforge
	// prints), its own key and region.
	script := filepath.Join(t.TempDir(), "app.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nAWS_ACCESS_KEY_ID="+e2eAppKeyID+" AWS_SECRET_ACCESS_KEY="+e2eAppSecret+
		" AWS_SESSION_TOKEN=e2e-app-session AWS_REGION=us-west-2 exec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	app := append([]string{script}, argv...)
	if mode == "default" {
		// The SDK's default call (no inferenceConfig) records with the
		// request defaults traceforge init writes, no code change.
		if in := run(t, awsEnv(t), tf("init")...); in.code != 0 {
			t.Fatalf("init: want exit 0\n%s", in)
		}
	}
	wire := newWireTap(t)
	rec := run(t, awsEnv(t, "AWS_ACCESS_KEY_ID="+e2eTFKeyID, "AWS_SECRET_ACCESS_KEY="+e2eTFSecret, "AWS_REGION=eu-west-1", wire.env("record")),
		append(tf("record", "--bedrock-upstream", fake.URL, "--"), app...)...)
	if rec.code != 0 {
		t.Fatalf("record: want exit 0\n%s", rec)
	}
	if got := fake.Signed(); got != int64(calls) || fake.Requests() != int64(calls) {
		t.Fatalf("the fake accepted %d re-signed request(s) of %d received, want %d", got, fake.Requests(), calls)
	}
	want := transcript(t, self, mode, rec)
	files, err := filepath.Glob(filepath.Join(dir, "bedrock", "*.json"))
	if err != nil || len(files) != calls {
		t.Fatalf("%d snapshot(s) in bedrock/, want %d (%v)", len(files), calls, err)
	}
	src, err := os.ReadFile(filepath.FromSlash(c.file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Snapshots []struct {
				Endpoint string `json:"endpoint"`
				Source   struct {
					File     string `json:"file"`
					Line     int    `json:"line"`
					Function string `json:"function"`
				} `json:"source"`
			} `json:"snapshots"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Snapshots) != 1 {
			t.Fatalf("%s: want one snapshot (%v)\n%s", filepath.Base(f), err, raw)
		}
		sn := doc.Snapshots[0]
		if sn.Endpoint != m.endpoint {
			t.Errorf("%s: endpoint %q, want %q (keyed by the decoded model id)", filepath.Base(f), sn.Endpoint, m.endpoint)
		}
		if sn.Source.File != c.file || sn.Source.Function != m.function {
			t.Errorf("%s: source %s:%d:%s, want %s, function %s", filepath.Base(f), sn.Source.File, sn.Source.Line, sn.Source.Function, c.file, m.function)
			continue
		}
		if l := sn.Source.Line; l < 1 || l > len(lines) || !strings.Contains(lines[l-1], m.call) {
			t.Errorf("%s: source.line %d is not the SDK call (%s)", filepath.Base(f), l, m.call)
		}
	}
	for _, secret := range []string{e2eAppKeyID, e2eAppSecret, e2eTFKeyID, e2eTFSecret, "e2e-app-session", "AWS4-HMAC-SHA256"} {
		if strings.Contains(rec.combined(), secret) || folderContains(t, dir, secret) {
			t.Fatalf("%q reached the output or the snapshot folder", secret)
		}
	}

	if v := run(t, awsEnv(t), tf("verify")...); v.code != 0 {
		t.Fatalf("verify (static): want exit 0\n%s", v)
	}

	fake.Close()
	before := fake.Requests()
	rep := run(t, awsEnv(t, wire.env("replay")), append(tf("verify", "--"), argv...)...)
	if rep.code != 0 {
		t.Fatalf("verify -- %s %s (replay): want exit 0\n%s", c.name, mode, rep)
	}
	if got := transcript(t, self, mode, rep); got != want {
		t.Fatalf("replayed transcript differs from the recorded one\n--- recorded ---\n%s--- replayed ---\n%s", want, got)
	}
	if strings.HasSuffix(mode, "stream") && wireSnapshots(t, dir) == 0 {
		t.Errorf("mode %s: no snapshot holds response.wire", mode) // checkWire asks it of "stream" only
	}
	wire.checkWire(t, dir, mode)
	if fake.Requests() != before {
		t.Fatal("replay reached the upstream")
	}

	drift := run(t, awsEnv(t, `TF_E2E_PROMPT_SUFFIX= (changed)`), append(tf("verify", "--"), argv...)...)
	if drift.code != 1 {
		t.Fatalf("verify with a changed prompt: want exit 1\n%s", drift)
	}
	if !hasDiffLine(drift.combined(), "(changed)") {
		t.Fatalf("verify with a changed prompt: no diff line mentioning %q\n%s", "(changed)", drift)
	}
}
