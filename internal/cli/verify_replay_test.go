package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/snapshottest"
)

// The helper client: the test binary re-executed as COMMAND. It makes real
// HTTP calls to $OPENAI_BASE_URL and $ANTHROPIC_BASE_URL like an SDK would.
const helperEnv = "TRACEFORGE_VERIFY_TEST_HELPER"

func TestVerifyHelperClient(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for the verify tests")
	}
	failed := false
	call := func(url string, body any, h map[string]string) (int, map[string]any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println("transport error:", err)
			os.Exit(9)
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	fmt.Println("keys:", os.Getenv("OPENAI_API_KEY"), os.Getenv("ANTHROPIC_API_KEY"))
	for _, p := range splitList(os.Getenv("TF_HELPER_OPENAI")) {
		status, v := call(os.Getenv("OPENAI_BASE_URL")+"/chat/completions", snapshottest.OpenAIChat(p).Request,
			map[string]string{"Authorization": "Bearer " + os.Getenv("OPENAI_API_KEY")})
		if status != 200 {
			failed = true
			fmt.Printf("openai error %d\n", status)
			continue
		}
		msg := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		fmt.Println("openai:", msg["content"])
	}
	for _, p := range splitList(os.Getenv("TF_HELPER_ANTHROPIC")) {
		status, v := call(os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages", snapshottest.AnthropicMessage(p).Request,
			map[string]string{"x-api-key": os.Getenv("ANTHROPIC_API_KEY"), "anthropic-version": "2023-06-01"})
		if status != 200 {
			failed = true
			fmt.Printf("anthropic error %d\n", status)
			continue
		}
		fmt.Println("anthropic:", v["content"].([]any)[0].(map[string]any)["text"])
	}
	code, _ := strconv.Atoi(os.Getenv("TF_HELPER_EXIT"))
	if failed && code == 0 {
		code = 5
	}
	os.Exit(code)
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}

// syncBuffer is a bytes.Buffer safe for concurrent use (server mode tests
// read it while the command writes).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// verifyEnv is a test environment: a project folder with a snapshot set.
type verifyEnv struct {
	t    *testing.T
	root string
	dir  string
	env  map[string]string
	ctx  func() (context.Context, context.CancelFunc)
}

func newVerifyEnv(t *testing.T, items ...snapshottest.Item) *verifyEnv {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".ai-snapshots")
	if _, err := snapshottest.WriteSet(dir, items...); err != nil {
		t.Fatal(err)
	}
	return &verifyEnv{t: t, root: root, dir: dir, env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}}
}

func (e *verifyEnv) streams() (*IOStreams, *syncBuffer, *syncBuffer) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx := e.ctx
	if ctx == nil {
		ctx = func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
	}
	env := map[string]string{}
	for k, v := range e.env {
		env[k] = v
	}
	return &IOStreams{
		In: strings.NewReader(""), Out: out, ErrOut: errOut,
		Getenv: func(k string) string { return env[k] },
		Environ: func() []string {
			var l []string
			for k, v := range env {
				l = append(l, k+"="+v)
			}
			return l
		},
		Context: ctx,
		Dir:     e.root,
	}, out, errOut
}

// run runs traceforge with args and returns the exit code, stdout and stderr.
func (e *verifyEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	io, out, errOut := e.streams()
	code := Main(args, io)
	return code, out.String(), errOut.String()
}

// helper returns the argv of the helper client with its settings in env.
func (e *verifyEnv) helper(openai, anthropic string, exit int) []string {
	e.env[helperEnv] = "1"
	e.env["TF_HELPER_OPENAI"] = openai
	e.env["TF_HELPER_ANTHROPIC"] = anthropic
	e.env["TF_HELPER_EXIT"] = strconv.Itoa(exit)
	return []string{os.Args[0], "-test.run=^TestVerifyHelperClient$"}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func baseVerifyItems() []snapshottest.Item {
	return []snapshottest.Item{snapshottest.OpenAIChat("hello"), snapshottest.AnthropicMessage("hi")}
}

func TestVerifyReplayCommand(t *testing.T) {
	for _, flags := range [][]string{nil, {"--replay-memo=false"}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) { testVerifyReplayCommand(t, flags) })
	}
}

// TestVerifyReplayMemoFlag: --replay-memo=false turns the memo of repeated
// requests off; the default keeps it (a negative MemoGeneration is off).
func TestVerifyReplayMemoFlag(t *testing.T) {
	for _, c := range []struct {
		memo bool
		off  bool
	}{{true, false}, {false, true}} {
		o := &verifyOptions{ReplayMemo: c.memo}
		if got := o.replayOptions(nil, ".ai-snapshots").MemoGeneration < 0; got != c.off {
			t.Errorf("ReplayMemo %v: memo off = %v, want %v", c.memo, got, c.off)
		}
	}
}

func testVerifyReplayCommand(t *testing.T, flags []string) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	argv := e.helper("hello", "hi", 0)
	code, out, errOut := e.run(append(append(append([]string{"verify"}, flags...), "--"), argv...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"keys: traceforge-replay traceforge-replay", "openai: Summary: hello", "anthropic: Answer: hi", "2 request(s) replayed", "2 synthesized"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if want := strings.Join(argv, " ") + " exited 0"; lastLine(errOut) != want {
		t.Errorf("last line %q, want %q", lastLine(errOut), want)
	}
}

func TestVerifyReplayKeepsExistingKeys(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	e.env["OPENAI_API_KEY"] = "sk-mine"
	argv := e.helper("hello", "", 0)
	_, out, _ := e.run(append([]string{"verify", "--"}, argv...)...)
	if !strings.Contains(out, "keys: sk-mine traceforge-replay") {
		t.Fatalf("stdout:\n%s", out)
	}
}

func TestVerifyReplayExitCodePropagates(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	argv := e.helper("hello", "hi", 7)
	code, out, errOut := e.run(append([]string{"verify", "--"}, argv...)...)
	if code != 7 {
		t.Fatalf("exit %d, want 7\n%s\n%s", code, out, errOut)
	}
	if want := strings.Join(argv, " ") + " exited 7"; lastLine(errOut) != want {
		t.Errorf("last line %q, want %q", lastLine(errOut), want)
	}
}

func TestVerifyReplayChangedPrompt(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	argv := e.helper("hello there", "hi", 0)
	code, out, errOut := e.run(append([]string{"verify", "--"}, argv...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (traceforge failure wins over the command's 5)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"openai error 404",
		"✗ unmatched openai request /v1/chat/completions",
		"closest snapshots:\n  1. .ai-snapshots/openai/",
		`/messages/1/content: "hello" → "hello there"`,
		`-        "content": "hello",`,
		`+        "content": "hello there",`,
		"FAIL 1 unmatched request(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(lastLine(errOut), " exited 5") {
		t.Errorf("last line %q", lastLine(errOut))
	}
}

func TestVerifyReplayUnused(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	argv := e.helper("hello", "", 0)
	code, out, errOut := e.run(append([]string{"verify", "--"}, argv...)...)
	if code != 0 || !strings.Contains(out, "note: 1 snapshot(s) were never requested:\n  .ai-snapshots/anthropic/") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = e.run(append([]string{"verify", "--fail-on-unused", "--"}, argv...)...)
	if code != 1 || !strings.Contains(out, "error: 1 snapshot(s) were never requested:") || !strings.Contains(out, "FAIL 1 unused snapshot(s)") {
		t.Fatalf("--fail-on-unused: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.HasSuffix(lastLine(errOut), " exited 0") {
		t.Errorf("last line %q", lastLine(errOut))
	}
}

func TestVerifyReplayStaticFailureDoesNotStartCommand(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	// Tamper with one snapshot's content without resealing it.
	es, _ := os.ReadDir(filepath.Join(e.dir, "openai"))
	p := filepath.Join(e.dir, "openai", es[0].Name())
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, bytes.Replace(data, []byte("Summary: hello"), []byte("Summary: HELLO"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := e.helper("hello", "hi", 0)
	code, out, errOut := e.run(append([]string{"verify", "--"}, argv...)...)
	if code != 1 || strings.Contains(out, "keys:") || !strings.Contains(errOut, "was not started") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestVerifyReplayJUnitOutput(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	argv := e.helper("hello", "changed", 0)
	report := filepath.Join(e.root, "verify.xml")
	code, _, errOut := e.run(append([]string{"verify", "--format", "junit", "--output", report, "--"}, argv...)...)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	doc := parseJUnitDoc(t, data)
	if doc.Tests != 3 || doc.Failures != 1 {
		t.Fatalf("tests %d failures %d\n%s", doc.Tests, doc.Failures, data)
	}
	// The summary goes to stderr, then the command line last.
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-2], "FAIL 1 unmatched request(s)") || !strings.HasSuffix(lines[len(lines)-1], " exited 5") {
		t.Fatalf("stderr:\n%s", errOut)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	for _, args := range [][]string{
		{"verify", "--shard", "1/2", "--", "true"},
		{"verify", "--shard", "1/2", "--serve"},
		{"verify", "--serve", "--", "true"},
		{"verify", "--live", "--", "true"},
		{"verify", "--runs", "3"},
		{"verify", "--live", "--runs", "0"},
		{"verify", "--listen", "127.0.0.1:0"},
		{"verify", "--replay-latency"},
		{"verify", "--replay-memo=false"},
		{"verify", "--format", "yaml"},
		{"verify", "--", "/nonexistent/command"},
		{"verify", "--live", "--openai-upstream", "ftp://x"},
	} {
		code, _, errOut := e.run(args...)
		if code != 2 || !strings.Contains(errOut, "traceforge: error: ") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}

func TestVerifyServe(t *testing.T) {
	e := newVerifyEnv(t, baseVerifyItems()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.ctx = func() (context.Context, context.CancelFunc) { return ctx, func() {} }
	io, out, errOut := e.streams()
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"verify", "--serve", "--listen", "127.0.0.1:0", "--allow-host", "app.test", "--format", "json"}, io)
	}()
	var base string
	deadline := time.Now().Add(10 * time.Second)
	for base == "" && time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "export OPENAI_BASE_URL="); ok {
				base = v
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("no exports printed:\n%s\n%s", out.String(), errOut.String())
	}
	for _, want := range []string{"export ANTHROPIC_BASE_URL=http://127.0.0.1:", "export TRACEFORGE_URL=http://127.0.0.1:", "export OPENAI_API_KEY=traceforge-replay", "export ANTHROPIC_API_KEY=traceforge-replay"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("exports lack %q:\n%s", want, out.String())
		}
	}
	postHost := func(prompt, host string) int {
		b, _ := json.Marshal(snapshottest.OpenAIChat(prompt).Request)
		req, _ := http.NewRequest("POST", base+"/chat/completions", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io2Discard(resp)
		return resp.StatusCode
	}
	post := func(prompt string) int { return postHost(prompt, "") }
	// The server is wired behind the Host guard: a foreign Host is refused
	// before replay sees it, an --allow-host name is served.
	if s := postHost("hello", "evil.example"); s != 403 {
		t.Fatalf("foreign Host: %d, want 403", s)
	}
	if s := postHost("hello", "app.test:8080"); s != 200 {
		t.Fatalf("hit with an allowed Host: %d", s)
	}
	if s := post("goodbye"); s != 404 {
		t.Fatalf("miss: %d", s)
	}
	cancel()
	select {
	case code := <-done:
		if code != 1 {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	// The JSON report follows the exports.
	s := out.String()
	i := strings.Index(s, "{")
	var rep struct {
		OK        bool
		Mode      string
		Replayed  int
		Unmatched []struct{ Key, Diff string }
		Unused    []string
	}
	if err := json.Unmarshal([]byte(s[i:]), &rep); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	if rep.OK || rep.Mode != "serve" || rep.Replayed != 1 || len(rep.Unmatched) != 1 || !strings.Contains(rep.Unmatched[0].Diff, `+        "content": "goodbye",`) || len(rep.Unused) != 1 {
		t.Fatalf("report: %+v", rep)
	}
}

func io2Discard(resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(io.Discard, resp.Body)
}
