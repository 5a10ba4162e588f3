package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
)

// The e2e's AWS credentials: the application's (it signs for traceforge's
// host with them) and traceforge's own, the only ones the fake Bedrock
// accepts — so every call that reaches it was signed again by traceforge.
const (
	e2eAppKeyID    = "AKIDE2EAPPLICATION"
	e2eAppSecret   = "e2e-application-secret"
	e2eTFKeyID     = "AKIDE2ETRACEFORGE"
	e2eTFSecret    = "e2e-traceforge-secret"
	bedrockClient  = "bedrockgo"
	bedrockSrcFile = "clients/bedrockgo/main.go"
)

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

// TestBedrockClient runs the real aws-sdk-go-v2 bedrockruntime client
// (Converse, ConverseStream, a tool round trip) through traceforge against
// the fake Bedrock, which checks every SigV4 signature: record (the app
// signs with its own key, the fake accepts only traceforge's) → static
// verify → offline replay with the fake stopped, no AWS credential in the
// environment (replay gives dummy ones) and an identical transcript →
// drift exits 1. No key, secret or signature reaches the output or the
// snapshot folder.
func TestBedrockClient(t *testing.T) {
	setup(t)
	bedrockBuild.once.Do(func() {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bins.dir, bedrockClient), "./clients/bedrockgo").CombinedOutput()
		if err != nil {
			bedrockBuild.err = err
			t.Logf("%s", out)
		}
	})
	if bedrockBuild.err != nil {
		t.Fatalf("build %s: %v", bedrockClient, bedrockBuild.err)
	}
	for mode, calls := range map[string]int{"plain": 1, "stream": 1, "tool": 2, "default": 1} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			bedrockRecordVerifyReplayDrift(t, mode, calls)
		})
	}
}

func bedrockRecordVerifyReplayDrift(t *testing.T, mode string, calls int) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tf := func(args ...string) []string { return append([]string{bins.traceforge, "--dir", dir}, args...) }
	argv := []string{filepath.Join(bins.dir, bedrockClient), mode}
	self := client{name: bedrockClient}

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
	src, err := os.ReadFile(bedrockSrcFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if !strings.Contains(text, `"file": "`+bedrockSrcFile+`"`) || !strings.Contains(text, `"endpoint": "/model/anthropic.claude-3-haiku-20240307-v1:0/converse"`) {
			t.Errorf("%s: not attributed to %s or not keyed by the decoded model id:\n%s", filepath.Base(f), bedrockSrcFile, text)
		}
		i := strings.Index(text, `"line": `)
		line := 0
		for _, ch := range text[i+len(`"line": `):] {
			if ch < '0' || ch > '9' {
				break
			}
			line = line*10 + int(ch-'0')
		}
		if line < 1 || line > len(lines) || !strings.Contains(lines[line-1], "client.Converse") {
			t.Errorf("%s: source.line %d is not the SDK call", filepath.Base(f), line)
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
		t.Fatalf("verify -- %s %s (replay): want exit 0\n%s", bedrockClient, mode, rep)
	}
	if got := transcript(t, self, mode, rep); got != want {
		t.Fatalf("replayed transcript differs from the recorded one\n--- recorded ---\n%s--- replayed ---\n%s", want, got)
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
