// Package e2e runs traceforge end to end with the official SDKs: each client
// records against the fake upstream, verifies statically, replays offline with
// the upstream stopped (same transcript), and fails on a deliberate drift.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// client is one end-to-end application.
type client struct {
	name string
	argv []string // before the mode; relative paths are resolved by setup
	file string   // source file relative to the e2e folder (the project root)
	// provider is the snapshot folder the client's calls land in.
	provider string
	// modes the client runs; nil means every mode.
	modes []string
	// fnPrefix precedes the mode's function name in source.function (V8
	// names a function called with a receiver after the receiver's class).
	fnPrefix string
	// mintIDs runs the fake upstream with -mint-ids (new response ids on
	// every call, as the real Responses API) and re-records once: the set
	// must come out byte for byte the same.
	mintIDs bool
	// endpoints, when set, are the only endpoints its snapshots may record
	// (the API a wrapper library defaults to).
	endpoints []string
}

// responsesOnly and chatOnly are the endpoints of a client that must use
// the Responses API, or Chat Completions.
var (
	responsesOnly = []string{"/v1/responses"}
	chatOnly      = []string{"/v1/chat/completions"}
)

// wrapperModes are the modes of the clients that exercise a wrapper library.
var wrapperModes = []string{"plain", "stream"}

var clients = []client{
	{name: "openaigo", file: "clients/openaigo/main.go", provider: "openai", modes: withDefault},
	{name: "goopenai", file: "clients/goopenai/main.go", provider: "openai"},
	{name: "anthropicgo", file: "clients/anthropicgo/main.go", provider: "anthropic", modes: withDefault},
	{name: "openai-node", argv: []string{"node", "node/openai.mjs"}, file: "node/openai.mjs", provider: "openai", modes: withDefault},
	{name: "anthropic-node", argv: []string{"node", "node/anthropic.mjs"}, file: "node/anthropic.mjs", provider: "anthropic", modes: withDefault},
	{name: "langchain-node", argv: []string{"node", "node/langchain.mjs"}, file: "node/langchain.mjs", provider: "openai", modes: wrapperModes, endpoints: chatOnly},
	{name: "langchain-resp-node", argv: []string{"node", "node/langchain-resp.mjs"}, file: "node/langchain-resp.mjs", provider: "openai", modes: wrapperModes, endpoints: responsesOnly},
	// The AI SDK's and the Agents SDK's default OpenAI API: Responses.
	{name: "aisdk-node", argv: []string{"node", "node/aisdk.mjs"}, file: "node/aisdk.mjs", provider: "openai", endpoints: responsesOnly},
	{name: "agents-node", argv: []string{"node", "node/agents.mjs"}, file: "node/agents.mjs", provider: "openai", modes: wrapperModes, endpoints: responsesOnly},
	// LangChain under node:test with the runner setup loaded.
	{name: "nodetest-node", argv: []string{"node", "--import", "./node/setup-node-test.mjs", "node/runner.test.mjs"}, file: "node/runner.test.mjs", provider: "openai", modes: wrapperModes, fnPrefix: "TestContext."},
	// openai-go's Responses client (plain, streamed, a function-tool round
	// trip, a previous_response_id chain) and an embeddings-then-chat flow.
	{name: "openairesp", file: "clients/openairesp/main.go", provider: "openai", modes: []string{"plain", "stream", "tool", "chain", "rag", "default", "around"}, mintIDs: true},
	// The same through the openai npm package, plus its ResponseStream
	// helper (responses.stream(…).finalResponse()).
	// Gemini (@google/genai), Ollama (ollama) and the AI SDK's Anthropic
	// provider (ANTHROPIC_BASE_URL read as ending in /v1).
	{name: "genai-node", argv: []string{"node", "node/genai.mjs"}, file: "node/genai.mjs", provider: "gemini", modes: []string{"plain", "stream", "tool", "embed", "default"}},
	{name: "ollama-node", argv: []string{"node", "node/ollama.mjs"}, file: "node/ollama.mjs", provider: "ollama", modes: []string{"chat", "stream", "generate", "tool", "embed", "default"}},
	{name: "aisdk-anthropic-node", argv: []string{"node", "node/aisdk-anthropic.mjs"}, file: "node/aisdk-anthropic.mjs", provider: "anthropic", modes: wrapperModes, endpoints: []string{"/v1/messages"}},
	{name: "openairesp-node", argv: []string{"node", "node/openairesp.mjs"}, file: "node/openairesp.mjs", provider: "openai", modes: []string{"plain", "stream", "helper", "tool", "chain", "rag", "default", "around"}, mintIDs: true},
}

var modes = []string{"plain", "stream", "tool"}

// withDefault adds "default": the SDK's default call (no temperature, seed
// or max tokens), recorded after `traceforge init` wrote the request
// defaults of its deterministic preset into the project's config.
var withDefault = []string{"plain", "stream", "tool", "default"}

// calls is how many LLM calls (snapshots) each mode makes.
var calls = map[string]int{"default": 1, "plain": 1, "chat": 1, "stream": 1, "helper": 1, "generate": 1, "embed": 1, "tool": 2, "chain": 2, "rag": 2,
	// count tokens, upload, background create, three polls (two find it
	// in progress): exchanges, the polls as occurrences.
	"around": 6}

// function is the client function each mode's calls come from.
var function = map[string]string{"default": "defaultCall", "plain": "plain", "chat": "chat", "stream": "stream", "helper": "helper", "generate": "generate", "embed": "embed", "tool": "agent", "chain": "chain", "rag": "rag", "around": "around"}

// bins holds the binaries built once for the whole run.
var bins struct {
	once       sync.Once
	err        error
	dir        string
	traceforge string
	fake       string
}

const cmdTimeout = 3 * time.Minute

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// setup builds traceforge, the fake upstream and the Go clients, and installs
// the Node SDKs when node_modules is missing. Any failure fails the test.
func setup(t *testing.T) {
	t.Helper()
	bins.once.Do(func() { bins.err = build() })
	if bins.err != nil {
		t.Fatalf("e2e setup: %v", bins.err)
	}
}

func build() error {
	dir, err := os.MkdirTemp("", "traceforge-e2e-bin-")
	if err != nil {
		return err
	}
	bins.dir = dir
	bins.traceforge = filepath.Join(dir, "traceforge")
	bins.fake = filepath.Join(dir, "tf-fake-upstream")
	steps := []struct {
		dir  string
		argv []string
	}{
		{"..", []string{"go", "build", "-o", bins.traceforge, "./cmd/traceforge"}},
		{"..", []string{"go", "build", "-o", bins.fake, "./cmd/tf-fake-upstream"}},
	}
	for _, c := range clients {
		if c.argv == nil {
			steps = append(steps, struct {
				dir  string
				argv []string
			}{".", []string{"go", "build", "-o", filepath.Join(dir, c.name), "./" + filepath.Dir(c.file)}})
		}
	}
	if _, err := os.Stat(filepath.Join("node", "node_modules")); err != nil {
		steps = append(steps, struct {
			dir  string
			argv []string
		}{"node", []string{"npm", "ci", "--no-audit", "--no-fund"}})
	}
	for _, s := range steps {
		if _, err := exec.LookPath(s.argv[0]); err != nil {
			return fmt.Errorf("%s is required by the end-to-end suite and is not on PATH: %v", s.argv[0], err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
		cmd.Dir = s.dir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("%s (in %s): %v\n%s", strings.Join(s.argv, " "), s.dir, err, out)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node is required by the end-to-end suite and is not on PATH: %v", err)
	}
	return nil
}

// command returns the client's argv for mode.
func (c client) command(mode string) []string {
	if c.argv == nil {
		return []string{filepath.Join(bins.dir, c.name), mode}
	}
	return append(slices.Clone(c.argv), mode)
}

// baseEnv is the test's environment without anything that would point a
// client or traceforge elsewhere, or change a prompt.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") ||
			strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") || strings.HasPrefix(k, "OLLAMA_") ||
			strings.HasPrefix(k, "TRACEFORGE_") || strings.HasPrefix(k, "TF_E2E_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// result is one finished command.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) combined() string { return r.stdout + r.stderr }

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout ---\n%s--- stderr ---\n%s", r.code, r.stdout, r.stderr)
}

// run runs argv in the e2e folder (the project root the clients attribute to).
func run(t *testing.T, env []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok || ctx.Err() != nil {
			t.Fatalf("%s: %v (timeout %v)\n%s", strings.Join(argv, " "), err, cmdTimeout, r)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// fakeUpstream is a running tf-fake-upstream.
type fakeUpstream struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
}

func startFake(t *testing.T, args ...string) *fakeUpstream {
	t.Helper()
	cmd := exec.Command(bins.fake, args...)
	cmd.Env = baseEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start tf-fake-upstream: %v", err)
	}
	f := &fakeUpstream{cmd: cmd, done: make(chan struct{})}
	t.Cleanup(f.stop)
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		io.Copy(io.Discard, stdout)
	}()
	go func() { cmd.Wait(); close(f.done) }()
	select {
	case line := <-first:
		url, ok := strings.CutPrefix(line, "FAKE_UPSTREAM_URL=")
		if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("tf-fake-upstream: first line %q, want FAKE_UPSTREAM_URL=http://127.0.0.1:PORT\n%s", line, stderr.String())
		}
		f.URL = url
	case <-time.After(30 * time.Second):
		t.Fatalf("tf-fake-upstream printed no URL within 30s\n%s", stderr.String())
	}
	return f
}

// stop ends the fake upstream and waits for it; calling it twice is fine.
func (f *fakeUpstream) stop() {
	select {
	case <-f.done:
		return
	default:
	}
	f.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		f.cmd.Process.Kill()
		<-f.done
	}
}

// transcript cuts the client's framed transcript out of stdout.
func transcript(t *testing.T, c client, mode string, r result) string {
	t.Helper()
	begin := fmt.Sprintf("=== %s %s ===\n", c.name, mode)
	i := strings.Index(r.stdout, begin)
	if i < 0 {
		t.Fatalf("no transcript %q in the output\n%s", strings.TrimSpace(begin), r)
	}
	j := strings.Index(r.stdout[i:], "=== end ===\n")
	if j < 0 {
		t.Fatalf("unterminated transcript in the output\n%s", r)
	}
	return r.stdout[i : i+j+len("=== end ===\n")]
}

func TestClients(t *testing.T) {
	setup(t)
	for _, c := range clients {
		cm := c.modes
		if cm == nil {
			cm = modes
		}
		for _, mode := range cm {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				recordVerifyReplayDrift(t, c, mode)
			})
		}
	}
}

func recordVerifyReplayDrift(t *testing.T, c client, mode string) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tf := func(args ...string) []string { return append([]string{bins.traceforge, "--dir", dir}, args...) }

	// a. Record against the fake upstream.
	var fakeArgs []string
	if c.mintIDs {
		fakeArgs = []string{"-mint-ids"}
	}
	fake := startFake(t, fakeArgs...)
	recEnv := append(baseEnv(), "OPENAI_API_KEY=e2e-openai-key", "ANTHROPIC_API_KEY=e2e-anthropic-key", "GEMINI_API_KEY="+geminiE2EKey)
	if mode == "default" {
		// The SDK's default call records only with request defaults:
		// traceforge init writes them (no code change in the client).
		if in := run(t, baseEnv(), tf("init")...); in.code != 0 {
			t.Fatalf("init: want exit 0\n%s", in)
		}
	}
	record := tf("record", "--openai-upstream", fake.URL+"/v1", "--anthropic-upstream", fake.URL,
		"--gemini-upstream", fake.URL, "--ollama-upstream", fake.URL, "--")
	wire := newWireTap(t)
	rec := run(t, append(slices.Clip(recEnv), wire.env("record")), append(record, c.command(mode)...)...)
	if rec.code != 0 {
		t.Fatalf("record: want exit 0\n%s", rec)
	}
	want := transcript(t, c, mode, rec)
	checkSources(t, c, mode, dir)
	if strings.Contains(rec.combined(), geminiE2EKey) || folderContains(t, dir, geminiE2EKey) {
		t.Fatal("the Gemini API key reached the output or the snapshot folder")
	}

	// b. Static checks.
	if v := run(t, baseEnv(), tf("verify")...); v.code != 0 {
		t.Fatalf("verify (static): want exit 0\n%s", v)
	}
	if c.mintIDs && mode != "around" {
		// Re-recording against an upstream that mints new ids keeps every
		// file: call ids, item ids and chains are keyed by position. (Not
		// the polls of a background response: their path holds the id the
		// upstream minted, docs/format.md "Exchanges".)
		before := readTree(t, dir)
		again := run(t, recEnv, append(record, c.command(mode)...)...)
		if again.code != 0 {
			t.Fatalf("re-record: want exit 0\n%s", again)
		}
		if after := readTree(t, dir); !maps.Equal(before, after) {
			t.Fatalf("re-recording with new upstream ids changed the set\n%s", again)
		}
	}

	// c. Replay offline: no upstream, no API keys.
	fake.stop()
	rep := run(t, append(baseEnv(), wire.env("replay")), append(tf("verify", "--"), c.command(mode)...)...)
	if rep.code != 0 {
		t.Fatalf("verify -- %s %s (replay): want exit 0\n%s", c.name, mode, rep)
	}
	if got := transcript(t, c, mode, rep); got != want {
		t.Fatalf("replayed transcript differs from the recorded one\n--- recorded ---\n%s--- replayed ---\n%s", want, got)
	}
	wire.checkWire(t, dir, mode)

	// d. A changed prompt is drift: exit 1 and a diff naming the change.
	driftEnv := append(baseEnv(), `TF_E2E_PROMPT_SUFFIX= (changed)`)
	drift := run(t, driftEnv, append(tf("verify", "--"), c.command(mode)...)...)
	if drift.code != 1 {
		t.Fatalf("verify with a changed prompt: want exit 1\n%s", drift)
	}
	if !hasDiffLine(drift.combined(), "(changed)") {
		t.Fatalf("verify with a changed prompt: no diff line mentioning %q\n%s", "(changed)", drift)
	}
}

// readTree returns every snapshot and manifest file below dir.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hasDiffLine reports whether out has an added or removed diff line holding s.
func hasDiffLine(out, s string) bool {
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) &&
			!strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") && strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// checkSources asserts that every snapshot the run wrote is attributed to the
// client's own source file, at a line that makes the SDK call, in the
// function that runs the mode.
func checkSources(t *testing.T, c client, mode, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, c.provider, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != calls[mode] {
		t.Fatalf("%d snapshot(s) in %s/%s, want %d", len(files), filepath.Base(dir), c.provider, calls[mode])
	}
	src, err := os.ReadFile(filepath.FromSlash(c.file))
	if err != nil {
		t.Fatalf("read client source: %v", err)
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
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(doc.Snapshots) != 1 {
			t.Fatalf("%s: %d records, want 1", f, len(doc.Snapshots))
		}
		if ep := doc.Snapshots[0].Endpoint; c.endpoints != nil && !slices.Contains(c.endpoints, ep) {
			t.Errorf("%s: endpoint %q, want one of %q", filepath.Base(f), ep, c.endpoints)
		}
		s := doc.Snapshots[0].Source
		if s.File != c.file {
			t.Errorf("%s: source.file = %q, want %q", filepath.Base(f), s.File, c.file)
			continue
		}
		if s.Function != c.fnPrefix+function[mode] {
			t.Errorf("%s: source.function = %q, want %q", filepath.Base(f), s.Function, c.fnPrefix+function[mode])
		}
		if s.Line < 1 || s.Line > len(lines) {
			t.Errorf("%s: source.line = %d, outside %s", filepath.Base(f), s.Line, c.file)
			continue
		}
		if code := lines[s.Line-1]; !makesCall(code) {
			t.Errorf("%s: source.line %d of %s is %q, want the SDK call", filepath.Base(f), s.Line, c.file, strings.TrimSpace(code))
		}
	}
}

// makesCall reports whether a client source line is an SDK call.
func makesCall(line string) bool {
	for _, call := range []string{
		"Completions.New(", "Completions.NewStreaming(", "Messages.New(", "Messages.NewStreaming(",
		"CreateChatCompletion(", "CreateChatCompletionStream(",
		"chat.completions.create(", "messages.create(", "messages.stream(",
		"Responses.New(", "Responses.NewStreaming(", "Embeddings.New(",
		"responses.create(", "responses.stream(", "embeddings.create(",
		"models.generateContent(", "models.generateContentStream(", "models.embedContent(",
		"ollama.chat(", "ollama.generate(", "ollama.embed(",
		"model.invoke(", "model.stream(", "generateText(", "streamText(", "run(agent,",
		"InputTokens.Count(", "Files.New(", "Responses.Get(", "inputTokens.count(", "files.create(", "responses.retrieve(",
	} {
		if strings.Contains(line, call) {
			return true
		}
	}
	return false
}
