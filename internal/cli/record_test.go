package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// recTestKey is the application's API key in these tests; it must never
// reach the snapshot folder or the output.
var recTestKey = "sk-proj-" + strings.Repeat("B", 74) + "T3BlbkFJ" + strings.Repeat("B", 74)

// The record helper client: the test binary re-executed as COMMAND. It calls
// $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL like an SDK, one call per entry of
// TF_REC_CALLS ("openai:prompt", "openai-stream:prompt", "anthropic:prompt",
// "nosource:prompt"), then exits with TF_REC_EXIT.
const recHelperEnv = "TRACEFORGE_RECORD_TEST_HELPER"

func TestRecordHelperClient(t *testing.T) {
	if os.Getenv(recHelperEnv) != "1" {
		t.Skip("helper process for the record tests")
	}
	if m := os.Getenv("TF_REC_MARKER"); m != "" {
		_ = os.WriteFile(m, []byte("started"), 0o644)
	}
	code, _ := strconv.Atoi(os.Getenv("TF_REC_EXIT"))
	for _, c := range strings.Split(os.Getenv("TF_REC_CALLS"), ",") {
		kind, prompt, ok := strings.Cut(c, ":")
		if !ok {
			continue
		}
		status, err := recHelperCall(kind, prompt)
		if err != nil || status != 200 {
			fmt.Printf("%s: status %d %v\n", kind, status, err)
			if code == 0 {
				code = 5
			}
			continue
		}
		fmt.Printf("%s: ok\n", kind)
	}
	os.Exit(code)
}

func recHelperCall(kind, prompt string) (int, error) {
	url := os.Getenv("OPENAI_BASE_URL") + "/chat/completions"
	body := map[string]any{"model": "gpt-4o-mini", "temperature": 0, "seed": 1, "max_tokens": 32,
		"messages": []any{map[string]any{"role": "user", "content": prompt}}}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+recTestKey)
	h.Set("X-Traceforge-Source", "app/main.go:10:run")
	switch kind {
	case "openai-stream":
		body["stream"] = true
	case "anthropic":
		url = os.Getenv("ANTHROPIC_BASE_URL") + "/v1/messages"
		body = map[string]any{"model": "claude-sonnet-4-5", "temperature": 0, "max_tokens": 32,
			"messages": []any{map[string]any{"role": "user", "content": prompt}}}
		h.Set("x-api-key", recTestKey)
		h.Set("anthropic-version", "2023-06-01")
	case "nosource":
		h.Del("X-Traceforge-Source")
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// TestRecordHelperMain runs traceforge itself (cli.Main with the process's
// real streams and signals) when re-executed by TestRecordSIGTERM.
func TestRecordHelperMain(t *testing.T) {
	if os.Getenv("TRACEFORGE_RECORD_TEST_MAIN") != "1" {
		t.Skip("helper process for TestRecordSIGTERM")
	}
	var args []string
	_ = json.Unmarshal([]byte(os.Getenv("TF_REC_ARGS")), &args)
	os.Exit(Main(args, System()))
}

// recEnv is a project folder with a fake upstream.
type recEnv struct {
	t    *testing.T
	root string
	dir  string
	fake *fakeupstream.Server
	env  map[string]string
}

func newRecEnv(t *testing.T) *recEnv {
	t.Helper()
	fake, err := fakeupstream.Start(fakeupstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	root := t.TempDir()
	return &recEnv{t: t, root: root, dir: filepath.Join(root, ".ai-snapshots"), fake: fake, env: map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), recHelperEnv: "1",
	}}
}

func (e *recEnv) streams(ctx context.Context) (*IOStreams, *syncBuffer, *syncBuffer) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	env := map[string]string{}
	for k, v := range e.env {
		env[k] = v
	}
	return &IOStreams{
		In:     strings.NewReader(""),
		Out:    out,
		ErrOut: errOut,
		Getenv: func(k string) string { return env[k] },
		Environ: func() []string {
			var l []string
			for k, v := range env {
				l = append(l, k+"="+v)
			}
			return l
		},
		Context: func() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) },
		Dir:     e.root,
	}, out, errOut
}

// upstreamFlags point record at the fake.
func (e *recEnv) upstreamFlags() []string {
	return []string{"--openai-upstream", e.fake.URL + "/v1", "--anthropic-upstream", e.fake.URL}
}

// helper is the COMMAND that makes calls.
func (e *recEnv) helper(calls string, exit int) []string {
	e.env["TF_REC_CALLS"] = calls
	e.env["TF_REC_EXIT"] = strconv.Itoa(exit)
	return []string{os.Args[0], "-test.run=^TestRecordHelperClient$"}
}

func (e *recEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	io, out, errOut := e.streams(context.Background())
	code := Main(args, io)
	return code, out.String(), errOut.String()
}

func (e *recEnv) record(calls string, exit int, flags ...string) (int, string, string) {
	args := append([]string{"record"}, e.upstreamFlags()...)
	args = append(args, flags...)
	args = append(args, "--")
	return e.run(append(args, e.helper(calls, exit)...)...)
}

// verifyOK runs the static checks over the set: no error finding.
func (e *recEnv) verifyOK() *check.SetResult {
	e.t.Helper()
	set, err := check.CheckSet(&snapshot.Store{Dir: e.dir}, check.Options{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			e.t.Errorf("static verification: %s", f.Error())
		}
	}
	return set
}

func (e *recEnv) files() map[string][]byte {
	out := map[string][]byte{}
	_ = filepath.Walk(e.dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || filepath.Base(p) == snapshot.LockName {
			return nil
		}
		rel, _ := filepath.Rel(e.dir, p)
		out[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		return nil
	})
	return out
}

func (e *recEnv) noKey(texts ...string) {
	e.t.Helper()
	for rel, b := range e.files() {
		if bytes.Contains(b, []byte("T3BlbkFJ")) {
			e.t.Errorf("%s holds the API key", rel)
		}
	}
	for _, s := range texts {
		if strings.Contains(s, "T3BlbkFJ") {
			e.t.Errorf("output holds the API key")
		}
	}
}

func recLastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestRecordCommand(t *testing.T) {
	e := newRecEnv(t)
	code, out, errOut := e.record("openai:Hello there,openai-stream:Stream this,anthropic:Hi Claude", 0)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got := recLastLine(errOut); !strings.HasSuffix(got, "exited 0") {
		t.Errorf("last line %q, want COMMAND exited 0", got)
	}
	if !strings.Contains(errOut, "3 call(s): 3 recorded") || !strings.Contains(errOut, "tokens:") {
		t.Errorf("summary:\n%s", errOut)
	}
	set := e.verifyOK()
	if len(set.Snapshots) != 3 || set.Manifest == nil || len(set.Manifest.Entries) != 3 {
		t.Errorf("want 3 snapshots in files and manifest, got %d", len(set.Snapshots))
	}
	e.noKey(out, errOut)

	// Zero churn: the same run again changes no byte.
	before := e.files()
	time.Sleep(1100 * time.Millisecond) // a later second
	code, _, errOut = e.record("openai:Hello there,openai-stream:Stream this,anthropic:Hi Claude", 0)
	if code != 0 || !strings.Contains(errOut, "3 unchanged") {
		t.Fatalf("re-record: exit %d\n%s", code, errOut)
	}
	after := e.files()
	if len(before) != len(after) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
	for rel, b := range before {
		if !bytes.Equal(b, after[rel]) {
			t.Errorf("%s changed on an unchanged re-record", rel)
		}
	}
}

func TestRecordExitCodes(t *testing.T) {
	t.Run("command code", func(t *testing.T) {
		e := newRecEnv(t)
		code, _, errOut := e.record("openai:Exit seven", 7)
		if code != 7 || !strings.HasSuffix(recLastLine(errOut), "exited 7") {
			t.Errorf("exit %d, last line %q", code, recLastLine(errOut))
		}
	})
	t.Run("unsnapshotted call wins", func(t *testing.T) {
		e := newRecEnv(t)
		code, _, errOut := e.record("openai:Fine,nosource:Who am I", 0)
		if code != 1 {
			t.Errorf("exit %d, want 1\n%s", code, errOut)
		}
		if !strings.HasSuffix(recLastLine(errOut), "exited 0") || !strings.Contains(errOut, "X-Traceforge-Source") {
			t.Errorf("stderr:\n%s", errOut)
		}
		e.verifyOK()
	})
	t.Run("command not found", func(t *testing.T) {
		e := newRecEnv(t)
		code, _, errOut := e.run(append(append([]string{"record"}, e.upstreamFlags()...), "--", "traceforge-no-such-command")...)
		if code != 2 || !strings.Contains(errOut, "command not found") {
			t.Errorf("exit %d\n%s", code, errOut)
		}
	})
	t.Run("prune without command", func(t *testing.T) {
		e := newRecEnv(t)
		if code, _, errOut := e.run("record", "--prune"); code != 2 || !strings.Contains(errOut, "--prune needs a command") {
			t.Errorf("exit %d\n%s", code, errOut)
		}
	})
	t.Run("sync modes", func(t *testing.T) {
		for _, mode := range []string{"after-answer", "before-answer"} {
			e := newRecEnv(t)
			if code, _, errOut := e.record("openai:Synced "+mode, 0, "--sync="+mode); code != 0 {
				t.Fatalf("--sync=%s: exit %d\n%s", mode, code, errOut)
			}
			if set := e.verifyOK(); set.Manifest == nil || len(set.Manifest.Entries) != 1 {
				t.Errorf("--sync=%s: manifest %+v, want 1 entry", mode, set.Manifest)
			}
		}
		e := newRecEnv(t)
		if code, _, errOut := e.run("record", "--sync=sometimes", "--", "true"); code != 2 || !strings.Contains(errOut, "--sync") || !strings.Contains(errOut, "before-answer") {
			t.Errorf("--sync=sometimes: exit %d\n%s", code, errOut)
		}
	})
	t.Run("bad upstream", func(t *testing.T) {
		e := newRecEnv(t)
		if code, _, errOut := e.run("record", "--openai-upstream", "ftp://x", "--", "true"); code != 2 || !strings.Contains(errOut, "--openai-upstream") {
			t.Errorf("exit %d\n%s", code, errOut)
		}
	})
	t.Run("upstream is the proxy itself", func(t *testing.T) {
		e := newRecEnv(t)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if code, _, errOut := e.run("record", "--listen", addr, "--openai-upstream", "http://"+addr+"/v1"); code != 2 || !strings.Contains(errOut, "itself") {
			t.Errorf("exit %d\n%s", code, errOut)
		}
	})
}

// Upstreams: flag, else TRACEFORGE_*_UPSTREAM, else the *_BASE_URL already set.
func TestRecordUpstreamFromEnvironment(t *testing.T) {
	e := newRecEnv(t)
	e.env["OPENAI_BASE_URL"] = e.fake.URL + "/v1"
	e.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:1" // overridden below
	e.env["TRACEFORGE_ANTHROPIC_UPSTREAM"] = e.fake.URL
	code, _, errOut := e.run("record", "--", e.helper("openai:From env,anthropic:From env too", 0)[0], "-test.run=^TestRecordHelperClient$")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if e.fake.Requests() != 2 {
		t.Errorf("fake got %d requests, want 2", e.fake.Requests())
	}
	e.verifyOK()
}

func TestRecordLockContention(t *testing.T) {
	e := newRecEnv(t)
	unlock, err := (&snapshot.Store{Dir: e.dir}).Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	e.env["TF_REC_MARKER"] = filepath.Join(e.root, "started")
	start := time.Now()
	code, _, errOut := e.record("openai:Locked out", 0)
	if code != 2 || !strings.Contains(errOut, "locked") || !strings.Contains(errOut, "another traceforge record") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("a held lock must fail fast")
	}
	if _, err := os.Stat(filepath.Join(e.root, "started")); err == nil {
		t.Errorf("the command was started")
	}
}

func TestRecordOnlyMissing(t *testing.T) {
	e := newRecEnv(t)
	if code, _, errOut := e.record("openai:Known,anthropic:Unused later", 0); code != 0 {
		t.Fatalf("first run: %d\n%s", code, errOut)
	}
	n := e.fake.Requests()
	code, _, errOut := e.record("openai:Known,openai:Brand new", 0, "--only-missing")
	if code != 0 {
		t.Fatalf("only-missing: exit %d\n%s", code, errOut)
	}
	if e.fake.Requests() != n+1 {
		t.Errorf("upstream got %d new requests, want 1 (the miss)", e.fake.Requests()-n)
	}
	if !strings.Contains(errOut, "1 served from snapshots") || !strings.Contains(errOut, "not requested by this run:") || !strings.Contains(errOut, ".ai-snapshots/anthropic/") {
		t.Errorf("summary:\n%s", errOut)
	}
	e.verifyOK()

	// A set that fails a static check: the command is not started, and
	// every finding names its file under the folder.
	broken := ""
	for rel := range e.files() {
		if strings.HasPrefix(rel, "openai/") {
			_ = os.WriteFile(filepath.Join(e.dir, rel), []byte(`{"version":"1.2.0"}`), 0o644)
			broken = rel
			break
		}
	}
	e.env["TF_REC_MARKER"] = filepath.Join(e.root, "started")
	code, _, errOut = e.record("openai:Known", 0, "--only-missing")
	if code != 1 || !strings.Contains(errOut, "not started") || !strings.Contains(errOut, "❌ .ai-snapshots/"+broken+": ") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.root, "started")); err == nil {
		t.Errorf("the command was started on an invalid set")
	}
}

func TestRecordPrune(t *testing.T) {
	e := newRecEnv(t)
	if code, _, errOut := e.record("openai:Keep,openai:Drop", 0); code != 0 {
		t.Fatalf("%d\n%s", code, errOut)
	}
	// Not pruned when the command fails.
	code, _, errOut := e.record("openai:Keep", 3, "--prune")
	if code != 3 || !strings.Contains(errOut, "--prune skipped") || len(e.verifyOK().Snapshots) != 2 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	code, _, errOut = e.record("openai:Keep", 0, "--prune")
	if code != 0 || !strings.Contains(errOut, "pruned .ai-snapshots/openai/") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if set := e.verifyOK(); len(set.Snapshots) != 1 || len(set.Manifest.Entries) != 1 {
		t.Errorf("want one snapshot left")
	}
}

// Server mode: exports on stdout exactly as serve.Exports gives them, calls
// recorded, and a clean stop on cancellation (SIGINT/SIGTERM) that flushes
// the manifest and prints the summary.
func TestRecordServerModeStops(t *testing.T) {
	e := newRecEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	io, out, errOut := e.streams(ctx)
	done := make(chan int, 1)
	go func() {
		done <- Main(append([]string{"record", "--listen", "127.0.0.1:0"}, e.upstreamFlags()...), io)
	}()
	addr := waitExports(t, out, done)
	want := strings.Join(registry.Exports(addr), "\n") + "\n"
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	e.env["OPENAI_BASE_URL"] = "http://" + addr + "/v1"
	os.Setenv("OPENAI_BASE_URL", "http://"+addr+"/v1")
	defer os.Unsetenv("OPENAI_BASE_URL")
	if status, err := recHelperCall("openai", "Served in the foreground"); err != nil || status != 200 {
		t.Fatalf("call: %d %v", status, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("record did not stop on cancellation")
	}
	if !strings.Contains(errOut.String(), "1 recorded") {
		t.Errorf("summary:\n%s", errOut.String())
	}
	if set := e.verifyOK(); set.Manifest == nil || len(set.Manifest.Entries) != 1 {
		t.Errorf("manifest not flushed at shutdown")
	}
}

// A real SIGTERM to a running `traceforge record` (the test binary running
// Main with the process's own signal handling).
func TestRecordSIGTERM(t *testing.T) {
	e := newRecEnv(t)
	args, _ := json.Marshal(append([]string{"record", "--listen", "127.0.0.1:0", "--dir", e.dir}, e.upstreamFlags()...))
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecordHelperMain$")
	cmd.Env = append(os.Environ(), "TRACEFORGE_RECORD_TEST_MAIN=1", "TF_REC_ARGS="+string(args))
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "export TRACEFORGE_URL=http://"); ok {
			addr = v
			break
		}
	}
	if addr == "" {
		t.Fatalf("no exports; stderr:\n%s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	os.Setenv("OPENAI_BASE_URL", "http://"+addr+"/v1")
	defer os.Unsetenv("OPENAI_BASE_URL")
	if status, err := recHelperCall("openai", "Before SIGTERM"); err != nil || status != 200 {
		t.Fatalf("call: %d %v", status, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("record did not stop on SIGTERM")
	}
	if !strings.Contains(stderr.String(), "1 recorded") {
		t.Errorf("no summary on SIGTERM:\n%s", stderr.String())
	}
	if set := e.verifyOK(); set.Manifest == nil || len(set.Manifest.Entries) != 1 {
		t.Errorf("manifest not flushed on SIGTERM")
	}
}

func waitExports(t *testing.T, out *syncBuffer, done chan int) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "export TRACEFORGE_URL=http://"); ok {
				return v
			}
		}
		select {
		case code := <-done:
			t.Fatalf("record exited %d before serving", code)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("no exports printed")
	return ""
}

// kill -9 mid-run loses at most the call in flight: every answered call is
// on disk, and the next record run (even one that records nothing) leaves a
// set that verify passes.
func TestRecordKill9(t *testing.T) {
	e := newRecEnv(t)
	args, _ := json.Marshal(append([]string{"record", "--listen", "127.0.0.1:0", "--dir", e.dir}, e.upstreamFlags()...))
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecordHelperMain$")
	cmd.Env = append(os.Environ(), "TRACEFORGE_RECORD_TEST_MAIN=1", "TF_REC_ARGS="+string(args))
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "export TRACEFORGE_URL=http://"); ok {
			addr = v
			break
		}
	}
	if addr == "" {
		t.Fatal("no exports")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	os.Setenv("OPENAI_BASE_URL", "http://"+addr+"/v1")
	defer os.Unsetenv("OPENAI_BASE_URL")
	for _, p := range []string{"Before the kill", "Right before the kill"} {
		if status, err := recHelperCall("openai", p); err != nil || status != 200 {
			t.Fatalf("call: %d %v", status, err)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	n := 0
	for rel := range e.files() {
		if _, _, ok := snapshot.ValidRelPath(rel); ok {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d snapshot files after kill -9, want both answered calls", n)
	}
	// The kernel released the lock; a run that records nothing completes the manifest.
	if code, _, errOut := e.record("", 0); code != 0 {
		t.Fatalf("next run: exit %d\n%s", code, errOut)
	}
	if set := e.verifyOK(); len(set.Manifest.Entries) != 2 {
		t.Errorf("manifest lists %d entries, want 2", len(set.Manifest.Entries))
	}
}
