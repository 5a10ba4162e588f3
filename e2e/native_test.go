package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// nativeClient is an end-to-end client of a native (non-OpenAI) wire
// format: Gemini through google.golang.org/genai, Ollama through
// github.com/ollama/ollama/api.
type nativeClient struct {
	name, file, provider string
	// calls is how many snapshots each mode writes.
	calls map[string]int
	// function is the client function each mode's calls come from.
	function map[string]string
}

var nativeClients = []nativeClient{
	{name: "geminigo", file: "clients/geminigo/main.go", provider: "gemini",
		calls:    map[string]int{"plain": 1, "stream": 1, "tool": 2, "embed": 1, "default": 1},
		function: map[string]string{"plain": "plain", "stream": "stream", "tool": "agent", "embed": "embed", "default": "defaultCall"}},
	{name: "ollamago", file: "clients/ollamago/main.go", provider: "ollama",
		calls:    map[string]int{"chat": 1, "stream": 1, "generate": 1, "tool": 2, "embed": 1, "default": 1},
		function: map[string]string{"chat": "chat", "stream": "stream", "generate": "generate", "tool": "agent", "embed": "embed", "default": "defaultCall"}},
}

// geminiE2EKey is a Gemini-shaped key: it reaches the fake upstream while
// recording and must never reach the snapshot folder or the output.
var geminiE2EKey = "AIzaSy" + strings.Repeat("E", 33)

var nativeBuild struct {
	once sync.Once
	err  error
}

// nativeEnv is baseEnv without the Gemini and Ollama variables.
func nativeEnv() []string {
	var env []string
	for _, kv := range baseEnv() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") || strings.HasPrefix(k, "OLLAMA_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func TestNativeClients(t *testing.T) {
	setup(t)
	nativeBuild.once.Do(func() {
		for _, c := range nativeClients {
			out, err := exec.Command("go", "build", "-o", filepath.Join(bins.dir, c.name), "./"+filepath.Dir(c.file)).CombinedOutput()
			if err != nil {
				nativeBuild.err = err
				t.Logf("%s", out)
				return
			}
		}
	})
	if nativeBuild.err != nil {
		t.Fatalf("build the native clients: %v", nativeBuild.err)
	}
	for _, c := range nativeClients {
		for mode := range c.calls {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				nativeRecordVerifyReplayDrift(t, c, mode)
			})
		}
	}
}

// nativeRecordVerifyReplayDrift: record → static verify → offline replay
// with an identical transcript and no key → a changed prompt exits 1.
func nativeRecordVerifyReplayDrift(t *testing.T, c nativeClient, mode string) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tf := func(args ...string) []string { return append([]string{bins.traceforge, "--dir", dir}, args...) }
	argv := []string{filepath.Join(bins.dir, c.name), mode}
	self := client{name: c.name}

	if mode == "default" {
		// The SDK's default call records with the request defaults
		// traceforge init writes, no code change.
		if in := run(t, nativeEnv(), tf("init")...); in.code != 0 {
			t.Fatalf("init: want exit 0\n%s", in)
		}
	}
	fake := startFake(t)
	wire := newWireTap(t)
	rec := run(t, append(nativeEnv(), "GEMINI_API_KEY="+geminiE2EKey, wire.env("record")),
		append(tf("record", "--gemini-upstream", fake.URL, "--ollama-upstream", fake.URL, "--"), argv...)...)
	if rec.code != 0 {
		t.Fatalf("record: want exit 0\n%s", rec)
	}
	want := transcript(t, self, mode, rec)
	checkNativeSources(t, c, mode, dir)
	if strings.Contains(rec.combined(), geminiE2EKey) || folderContains(t, dir, geminiE2EKey) {
		t.Fatal("the Gemini API key reached the output or the snapshot folder")
	}

	if v := run(t, nativeEnv(), tf("verify")...); v.code != 0 {
		t.Fatalf("verify (static): want exit 0\n%s", v)
	}

	fake.stop()
	rep := run(t, append(nativeEnv(), wire.env("replay")), append(tf("verify", "--"), argv...)...)
	if rep.code != 0 {
		t.Fatalf("verify -- %s %s (replay): want exit 0\n%s", c.name, mode, rep)
	}
	if got := transcript(t, self, mode, rep); got != want {
		t.Fatalf("replayed transcript differs from the recorded one\n--- recorded ---\n%s--- replayed ---\n%s", want, got)
	}
	wire.checkWire(t, dir, mode)

	drift := run(t, append(nativeEnv(), `TF_E2E_PROMPT_SUFFIX= (changed)`), append(tf("verify", "--"), argv...)...)
	if drift.code != 1 {
		t.Fatalf("verify with a changed prompt: want exit 1\n%s", drift)
	}
	if !hasDiffLine(drift.combined(), "(changed)") {
		t.Fatalf("verify with a changed prompt: no diff line mentioning %q\n%s", "(changed)", drift)
	}
}

func folderContains(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		found = found || strings.Contains(string(data), s)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// checkNativeSources: every snapshot is attributed to the client's file,
// the mode's function and a line that makes the SDK call.
func checkNativeSources(t *testing.T, c nativeClient, mode, dir string) {
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
		var line int
		for _, ch := range text[i+len(`"line": `):] {
			if ch < '0' || ch > '9' {
				break
			}
			line = line*10 + int(ch-'0')
		}
		if line < 1 || line > len(lines) || !nativeCall(lines[line-1]) {
			t.Errorf("%s: source.line %d is not the SDK call", filepath.Base(f), line)
		}
	}
}

func nativeCall(line string) bool {
	for _, call := range []string{"Models.GenerateContent(", "Models.GenerateContentStream(", "Models.EmbedContent(", "client.Chat(", "client.Generate(", "client.Embed("} {
		if strings.Contains(line, call) {
			return true
		}
	}
	return false
}
