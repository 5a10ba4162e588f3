package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// cloudClient is an end-to-end client of a cloud provider's wire through
// its official SDK: Vertex AI through google.golang.org/genai (Vertex
// backend) and @google/genai (vertexai: true), Azure OpenAI through
// openai-go's azure package and openai-node's AzureOpenAI (run with
// OPENAI_BASE_URL also set, as traceforge sets it).
type cloudClient struct {
	name, file, provider string
	argv                 []string          // how to run it (nil: the Go client built as name)
	calls                map[string]int    // snapshots each mode writes
	function             map[string]string // the client function of each mode
}

var cloudClients = []cloudClient{
	{name: "vertexgo", file: "clients/vertexgo/main.go", provider: "vertex",
		calls:    map[string]int{"plain": 1, "stream": 1, "tool": 2, "count": 1, "default": 1},
		function: map[string]string{"plain": "plain", "stream": "stream", "tool": "agent", "count": "count", "default": "defaultCall"}},
	{name: "azurego", file: "clients/azurego/main.go", provider: "azure",
		calls:    map[string]int{"plain": 1, "stream": 1, "default": 1},
		function: map[string]string{"plain": "plain", "stream": "stream", "default": "defaultCall"}},
	{name: "azure-node", file: "node/azure.mjs", provider: "azure", argv: []string{"node", "node/azure.mjs"},
		calls:    map[string]int{"plain": 1, "stream": 1},
		function: map[string]string{"plain": "plain", "stream": "stream"}},
	{name: "anthropic-vertex-node", file: "node/anthropic-vertex.mjs", provider: "vertex", argv: []string{"node", "node/anthropic-vertex.mjs"},
		calls:    map[string]int{"plain": 1, "stream": 1},
		function: map[string]string{"plain": "plain", "stream": "stream"}},
	{name: "vertex-node", file: "node/vertex.mjs", provider: "vertex", argv: []string{"node", "node/vertex.mjs"},
		calls:    map[string]int{"plain": 1, "stream": 1},
		function: map[string]string{"plain": "plain", "stream": "stream"}},
}

// The credentials the clients send while recording: they reach the fake
// upstream and must never reach the snapshot folder or the output.
var (
	vertexE2EToken = "ya29.e2e" + strings.Repeat("T", 40)
	azureE2EKey    = "azure-e2e-" + strings.Repeat("K", 22)
)

var cloudBuild struct {
	once sync.Once
	err  error
}

// cloudEnv is baseEnv without the Azure variables.
func cloudEnv() []string {
	var env []string
	for _, kv := range baseEnv() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "AZURE_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestCloudClients: record → static verify → offline replay (upstream
// stopped; Vertex AI with a constant token, Azure with replay's key
// placeholder) with an identical transcript → a changed prompt exits 1.
func TestCloudClients(t *testing.T) {
	setup(t)
	cloudBuild.once.Do(func() {
		for _, c := range cloudClients {
			if c.argv != nil {
				continue
			}
			out, err := exec.Command("go", "build", "-o", filepath.Join(bins.dir, c.name), "./"+filepath.Dir(c.file)).CombinedOutput()
			if err != nil {
				cloudBuild.err = err
				t.Logf("%s", out)
				return
			}
		}
	})
	if cloudBuild.err != nil {
		t.Fatalf("build the cloud clients: %v", cloudBuild.err)
	}
	for _, c := range cloudClients {
		for mode := range c.calls {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				cloudRecordVerifyReplayDrift(t, c, mode)
			})
		}
	}
}

func cloudRecordVerifyReplayDrift(t *testing.T, c cloudClient, mode string) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tf := func(args ...string) []string { return append([]string{bins.traceforge, "--dir", dir}, args...) }
	argv := []string{filepath.Join(bins.dir, c.name), mode}
	if c.argv != nil {
		argv = append(append([]string{}, c.argv...), mode)
	}
	self := client{name: c.name}

	if mode == "default" {
		// The SDK's default call records with the request defaults
		// traceforge init writes, no code change.
		if in := run(t, cloudEnv(), tf("init")...); in.code != 0 {
			t.Fatalf("init: want exit 0\n%s", in)
		}
	}
	fake := startFake(t)
	wire := newWireTap(t)
	rec := run(t, append(cloudEnv(), "TF_E2E_VERTEX_TOKEN="+vertexE2EToken, "AZURE_OPENAI_API_KEY="+azureE2EKey, wire.env("record")),
		append(tf("record", "--vertex-upstream", fake.URL, "--azure-upstream", fake.URL, "--"), argv...)...)
	if rec.code != 0 {
		t.Fatalf("record: want exit 0\n%s", rec)
	}
	want := transcript(t, self, mode, rec)
	checkCloudSources(t, c, mode, dir)
	for _, secret := range []string{vertexE2EToken, azureE2EKey} {
		if strings.Contains(rec.combined(), secret) || folderContains(t, dir, secret) {
			t.Fatalf("a credential reached the output or the snapshot folder")
		}
	}

	if v := run(t, cloudEnv(), tf("verify")...); v.code != 0 {
		t.Fatalf("verify (static): want exit 0\n%s", v)
	}

	fake.stop()
	replayEnv := append(cloudEnv(), "TF_E2E_VERTEX_TOKEN=ya29.traceforge-replay")
	rep := run(t, append(slices.Clip(replayEnv), wire.env("replay")), append(tf("verify", "--"), argv...)...)
	if rep.code != 0 {
		t.Fatalf("verify -- %s %s (replay): want exit 0\n%s", c.name, mode, rep)
	}
	if got := transcript(t, self, mode, rep); got != want {
		t.Fatalf("replayed transcript differs from the recorded one\n--- recorded ---\n%s--- replayed ---\n%s", want, got)
	}
	wire.checkWire(t, dir, mode)

	drift := run(t, append(replayEnv, `TF_E2E_PROMPT_SUFFIX= (changed)`), append(tf("verify", "--"), argv...)...)
	if drift.code != 1 {
		t.Fatalf("verify with a changed prompt: want exit 1\n%s", drift)
	}
	if !hasDiffLine(drift.combined(), "(changed)") {
		t.Fatalf("verify with a changed prompt: no diff line mentioning %q\n%s", "(changed)", drift)
	}
}

// checkCloudSources: the mode wrote its snapshots in the provider's folder,
// each attributed to the client's file and the mode's function, at a line
// that makes the SDK call.
func checkCloudSources(t *testing.T, c cloudClient, mode, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, c.provider, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != c.calls[mode] {
		t.Fatalf("%d snapshot(s) in %s, want %d", len(files), c.provider, c.calls[mode])
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
		text := string(raw)
		if !strings.Contains(text, `"file": "`+c.file+`"`) || !strings.Contains(text, `"function": "`+c.function[mode]+`"`) {
			t.Errorf("%s: not attributed to %s, function %s", filepath.Base(f), c.file, c.function[mode])
			continue
		}
		i := strings.Index(text, `"line": `)
		line := 0
		for _, ch := range text[i+len(`"line": `):] {
			if ch < '0' || ch > '9' {
				break
			}
			line = line*10 + int(ch-'0')
		}
		ok := line >= 1 && line <= len(lines)
		if ok {
			l := lines[line-1]
			ok = false
			for _, call := range []string{"Models.GenerateContent(", "Models.GenerateContentStream(", "Models.CountTokens(", "Chat.Completions.New(", "Chat.Completions.NewStreaming(",
				"models.generateContent(", "models.generateContentStream(", "chat.completions.create(", "messages.create(", "messages.stream("} {
				ok = ok || strings.Contains(l, call)
			}
		}
		if !ok {
			t.Errorf("%s: source.line %d is not the SDK call", filepath.Base(f), line)
		}
	}
}

// TestAzureOpenAINodeEndpointTrap: what docs/providers.md says of
// openai-node — AzureOpenAI refuses `endpoint` while OPENAI_BASE_URL is
// set (as it is for every traceforge COMMAND), which is why the client
// gives baseURL instead.
func TestAzureOpenAINodeEndpointTrap(t *testing.T) {
	setup(t)
	r := run(t, append(cloudEnv(), "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "AZURE_OPENAI_ENDPOINT=http://127.0.0.1:9", "AZURE_OPENAI_API_KEY=k"),
		"node", "node/azure.mjs", "endpoint-trap")
	if r.code != 0 || !strings.Contains(r.stdout, "endpoint refused:") || !strings.Contains(r.stdout, "mutually exclusive") {
		t.Fatalf("want AzureOpenAI to refuse endpoint with OPENAI_BASE_URL set\n%s", r)
	}
}
