package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// traceforgeBin builds the real binary into the test's temp folder (about
// a second with a warm build cache).
func traceforgeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the traceforge binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	bin := filepath.Join(t.TempDir(), "traceforge")
	if out, err := exec.Command(goBin, "build", "-o", bin, "../../cmd/traceforge").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The fault client: the test binary re-executed as record's COMMAND. It
// makes TF_FAULT_CALLS calls (all four shapes) from TF_FAULT_WORKERS
// parallel workers and stops at the first transport error (record killed).
// With TF_FAULT_RECEIVED it appends, for every 200 answer it has read to
// the end, one line "<provider>/<snapshot id>.json" to that file.
const faultClientEnv = "TRACEFORGE_FAULT_TEST_CLIENT"

func TestFaultHelperClient(t *testing.T) {
	if os.Getenv(faultClientEnv) != "1" {
		t.Skip("helper process for the fault tests")
	}
	workers, _ := strconv.Atoi(os.Getenv("TF_FAULT_WORKERS"))
	calls, _ := strconv.Atoi(os.Getenv("TF_FAULT_CALLS"))
	pool, _ := strconv.Atoi(os.Getenv("TF_FAULT_POOL"))
	if pool == 0 {
		pool = 1 << 30
	}
	var received *os.File
	if p := os.Getenv("TF_FAULT_RECEIVED"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		received = f
	}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1) - 1
				if n >= int64(calls) || failed.Load() > 0 {
					return
				}
				status, rel, err := faultCall(client, int(n), int(n)%pool)
				if err != nil {
					failed.Add(1)
					return
				}
				if status != 200 {
					fmt.Printf("call %d: status %d\n", n, status)
				} else if received != nil && rel != "" {
					// One write per line: whole or absent after a kill.
					_, _ = received.Write([]byte(rel + "\n"))
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		os.Exit(7)
	}
	os.Exit(0)
}

// faultCall makes call n; rel is the snapshot file the answer names
// (X-Traceforge-Snapshot-Id), once the body was read to the end.
func faultCall(client *http.Client, n, prompt int) (status int, rel string, err error) {
	text := fmt.Sprintf("Fault prompt number %d", prompt)
	prov := "openai"
	url := os.Getenv("OPENAI_BASE_URL") + "/chat/completions"
	body := map[string]any{"model": "gpt-4o-mini", "temperature": 0, "seed": 1, "max_tokens": 16,
		"messages": []any{map[string]any{"role": "user", "content": text}}}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+recTestKey)
	h.Set("X-Traceforge-Source", "app/fault.go:"+strconv.Itoa(1+n%3)+":run")
	if n%4 >= 2 {
		prov = "anthropic"
		url = os.Getenv("ANTHROPIC_BASE_URL") + "/v1/messages"
		body = map[string]any{"model": "claude-sonnet-4-5", "temperature": 0, "max_tokens": 16,
			"messages": []any{map[string]any{"role": "user", "content": text}}}
		h.Set("x-api-key", recTestKey)
		h.Set("anthropic-version", "2023-06-01")
	}
	if n%2 == 1 {
		body["stream"] = true
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, "", err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if _, err = io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, "", err
	}
	if id := resp.Header.Get(provider.HeaderSnapshotID); id != "" {
		rel = prov + "/" + id + ".json"
	}
	return resp.StatusCode, rel, nil
}

// faultEnv runs the real binary against a fake upstream.
type faultEnv struct {
	t    *testing.T
	bin  string
	root string
	dir  string
	fake *fakeupstream.Server
	// received: the file the fault client lists the answers it read in
	// ("" = not listed).
	received string
}

func newFaultEnv(t *testing.T, opts fakeupstream.Options) *faultEnv {
	t.Helper()
	bin := traceforgeBin(t)
	fake, err := fakeupstream.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	root := t.TempDir()
	return &faultEnv{t: t, bin: bin, root: root, dir: filepath.Join(root, ".ai-snapshots"), fake: fake}
}

// cmd builds a traceforge command (prefix: e.g. prlimit) in the project root.
func (e *faultEnv) cmd(prefix []string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, prefix...), e.bin, "--dir", e.dir), args...)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = e.root
	c.Env = append(os.Environ(), "NO_COLOR=1")
	return c
}

// recordArgs is `record` with the fake upstream and the fault client.
func (e *faultEnv) recordArgs(workers, calls, pool int) []string {
	return []string{"record", "--openai-upstream", e.fake.URL + "/v1", "--anthropic-upstream", e.fake.URL, "--",
		"env", faultClientEnv + "=1", "TF_FAULT_WORKERS=" + strconv.Itoa(workers), "TF_FAULT_CALLS=" + strconv.Itoa(calls),
		"TF_FAULT_POOL=" + strconv.Itoa(pool), "TF_FAULT_RECEIVED=" + e.received, os.Args[0], "-test.run=^TestFaultHelperClient$"}
}

// assertReceivedOnDisk: every answer the fault client read completely has
// its snapshot file on disk, passing every per-file check ("the answer
// arrived ⇒ its snapshot is on disk", DESIGN §2). It returns how many
// answers were checked.
func (e *faultEnv) assertReceivedOnDisk(when string) int {
	e.t.Helper()
	data, err := os.ReadFile(e.received)
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines = lines[:len(lines)-1] // the last is empty or cut by the kill
	for _, rel := range lines {
		b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(rel)))
		if err != nil {
			e.t.Errorf("%s: the client read the answer, but its snapshot is missing: %v", when, err)
			continue
		}
		if _, fs := check.CheckBytes(rel, b, check.Options{}); fs.Errors() > 0 {
			e.t.Errorf("%s: the client read the answer, but %s fails the per-file checks: %v", when, rel, fs)
		}
	}
	return len(lines)
}

// run runs a traceforge command to completion: exit code and output.
func (e *faultEnv) run(prefix []string, args ...string) (int, string) {
	e.t.Helper()
	c := e.cmd(prefix, args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		e.t.Fatalf("%v: %v", args, err)
	}
	return 0, out.String()
}

// diskState classifies what is on disk after a crash.
type diskState struct {
	snapshots, temps int
}

// assertNoDamage: no zero-length or truncated file; every snapshot file
// passes every per-file check; temp files may exist (hidden, ignored).
func (e *faultEnv) assertNoDamage() diskState {
	e.t.Helper()
	var st diskState
	_ = filepath.Walk(e.dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(e.dir, p)
		rel = filepath.ToSlash(rel)
		name := fi.Name()
		switch {
		case strings.Contains(name, ".tmp-"):
			st.temps++
			return nil
		case name == snapshot.LockName:
			return nil
		}
		if fi.Size() == 0 {
			e.t.Errorf("%s is empty after kill -9", rel)
			return nil
		}
		data, _ := os.ReadFile(p)
		if rel == snapshot.ManifestName {
			if _, err := snapshot.Decode(data); err != nil {
				e.t.Errorf("manifest.json is damaged after kill -9: %v", err)
			}
			return nil
		}
		st.snapshots++
		if _, fs := check.CheckBytes(rel, data, check.Options{}); fs.Errors() > 0 {
			e.t.Errorf("%s is damaged after kill -9: %v", rel, fs)
		}
		return nil
	})
	return st
}

// danglingOK: the set passes, or every error is a manifest that lags
// behind the files, naming the exact file. It returns the named files.
func (e *faultEnv) danglingOK() []string {
	e.t.Helper()
	set, err := check.CheckSet(&snapshot.Store{Dir: e.dir}, check.Options{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	var named []string
	for _, f := range set.Findings {
		if f.Severity != finding.Error {
			continue
		}
		switch {
		case f.Rule == check.RuleNotInManifest && f.File != "":
			named = append(named, f.File)
		case f.Rule == check.RuleManifestEntry && strings.HasSuffix(f.Pointer, "/hash"):
			named = append(named, f.File+": "+f.Pointer)
		case f.Rule == check.RuleManifestMissing:
			named = append(named, f.File)
		default:
			e.t.Errorf("after kill -9: unexpected finding %s", f.Error())
		}
	}
	return named
}

// crashIterations: TRACEFORGE_CRASH_ITERATIONS (make stress: 100), else 3.
func crashIterations() int {
	if n, err := strconv.Atoi(os.Getenv("TRACEFORGE_CRASH_ITERATIONS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// kill -9 of a real `traceforge record -- CLIENT` at random moments while 16
// parallel workers call it: no file is ever empty or truncated, verify passes
// or names exactly the files the manifest has not caught up with, `snapshot
// reindex` repairs, and the next record removes stray temp files (DESIGN §10).
func TestCrashSafetyKill9Loop(t *testing.T) {
	e := newFaultEnv(t, fakeupstream.Options{Nondeterministic: true})
	e.received = filepath.Join(e.root, "received.txt")
	iters := crashIterations()
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("TRACEFORGE_CRASH_SEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("%d iterations, TRACEFORGE_CRASH_SEED=%d", iters, seed)
	var temps, dangling, snaps, clean, answers, total int
	for i := 0; i < iters; i++ {
		if i > 0 && i%10 == 0 {
			// Keep the set small enough for quick checks in long runs.
			if err := os.RemoveAll(e.dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(e.received); err != nil {
				t.Fatal(err)
			}
		}
		c := e.cmd(nil, e.recordArgs(16, 1_000_000, 150)...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(60+rng.Intn(700)) * time.Millisecond)
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // record and its client
		_ = c.Wait()
		if t.Failed() {
			break
		}
		st := e.assertNoDamage()
		answers = e.assertReceivedOnDisk(fmt.Sprintf("iteration %d, after kill -9", i))
		named := e.danglingOK()
		temps += st.temps
		snaps += st.snapshots
		dangling += len(named)
		code, vout := e.run(nil, "verify")
		switch {
		case len(named) == 0 && code != 0:
			t.Errorf("iteration %d: verify exit %d on a clean set:\n%s", i, code, vout)
		case len(named) > 0 && code != 1:
			t.Errorf("iteration %d: verify exit %d, want 1 naming %v", i, code, named)
		}
		for _, n := range named {
			file, _, _ := strings.Cut(n, ": ")
			if !strings.Contains(vout, file) {
				t.Errorf("iteration %d: verify does not name %s:\n%s", i, file, vout)
			}
		}
		if len(named) == 0 {
			clean++
		}
		if code, rout := e.run(nil, "snapshot", "reindex"); code != 0 {
			t.Fatalf("iteration %d: reindex exit %d:\n%s", i, code, rout)
		}
		if code, vout := e.run(nil, "verify"); code != 0 {
			t.Fatalf("iteration %d: verify after reindex exit %d:\n%s", i, code, vout)
		}
		e.assertReceivedOnDisk(fmt.Sprintf("iteration %d, after reindex", i))
		total += answers
	}
	if total == 0 {
		t.Error("the fault client read no answer before any kill: nothing was checked")
	}
	t.Logf("%d kills: %d snapshot files checked, %d received answers checked on disk, %d left the manifest behind (%d files named), %d stray temp files", iters, snaps, total, iters-clean, dangling, temps)
	// A temp file left by an interrupted writer is ignored by verify and
	// removed by the next record.
	stray := filepath.Join(e.dir, "openai", ".0123456789ab.tmp-c0ffee")
	_ = os.MkdirAll(filepath.Dir(stray), 0o755)
	if err := os.WriteFile(stray, []byte(`{"trunc`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, vout := e.run(nil, "verify"); code != 0 {
		t.Errorf("verify does not ignore a stray temp file: exit %d\n%s", code, vout)
	}
	code, rout := e.run(nil, e.recordArgs(1, 0, 0)...)
	if code != 0 || !strings.Contains(rout, "removed stray temp file") {
		t.Errorf("record: exit %d\n%s", code, rout)
	}
	if st := e.assertNoDamage(); st.temps != 0 {
		t.Errorf("%d temp files left after record", st.temps)
	}
}

// Two record processes on one folder: the second is refused with exit 2
// while the first runs; after kill -9 of the first, no stale lock remains.
func TestRecordLockAcrossProcesses(t *testing.T) {
	e := newFaultEnv(t, fakeupstream.Options{})
	start := func() (*exec.Cmd, string) {
		c := e.cmd(nil, "record", "--listen", "127.0.0.1:0", "--openai-upstream", e.fake.URL+"/v1", "--anthropic-upstream", e.fake.URL)
		stdout, _ := c.StdoutPipe()
		c.Stderr = io.Discard
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "export TRACEFORGE_URL=http://"); ok {
				go func() { _, _ = io.Copy(io.Discard, stdout) }()
				return c, v
			}
		}
		t.Fatal("record printed no exports")
		return nil, ""
	}
	first, _ := start()
	code, out := e.run(nil, e.recordArgs(1, 1, 0)...)
	if code != 2 || !strings.Contains(out, "is locked") {
		t.Fatalf("second record: exit %d, want 2 and the lock message:\n%s", code, out)
	}
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	code, out = e.run(nil, e.recordArgs(2, 4, 0)...)
	if code != 0 || !strings.Contains(out, "4 recorded") {
		t.Fatalf("record after kill -9 of the lock holder: exit %d\n%s", code, out)
	}
	third, _ := start()
	_ = third.Process.Signal(syscall.SIGTERM)
	if err := third.Wait(); err != nil {
		t.Errorf("third record after SIGTERM: %v", err)
	}
}

// A full disk for a real record process (RLIMIT_FSIZE: every write past
// the limit fails with EFBIG, as on a full disk): record exits 1 listing
// each failed call with the path, the files already on disk are unchanged
// and no temp file is left.
func TestRecordFullDisk(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("needs prlimit (util-linux)")
	}
	e := newFaultEnv(t, fakeupstream.Options{Nondeterministic: true})
	if code, out := e.run(nil, e.recordArgs(1, 2, 0)...); code != 0 {
		t.Fatalf("first record: exit %d\n%s", code, out)
	}
	before := e.files()
	// The next run re-records both calls (the answers differ: changed) and
	// two new ones, every file larger than the 200-byte limit.
	code, out := e.run([]string{prlimit, "--fsize=200:200", "--"}, e.recordArgs(1, 4, 0)...)
	if code != 1 {
		t.Fatalf("record on a full disk: exit %d, want 1\n%s", code, out)
	}
	if n := strings.Count(out, "file too large"); n < 4 {
		t.Errorf("want 4 failed writes listed with the OS error, got %d:\n%s", n, out)
	}
	for _, want := range []string{"POST /v1/chat/completions", "POST /v1/messages", ".ai-snapshots/openai/", ".ai-snapshots/anthropic/"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name %q:\n%s", want, out)
		}
	}
	after := e.files()
	if len(after) != len(before) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
	for rel, b := range before {
		if !bytes.Equal(after[rel], b) {
			t.Errorf("%s changed on a full disk", rel)
		}
	}
	if st := e.assertNoDamage(); st.temps != 0 {
		t.Errorf("%d temp files left", st.temps)
	}
	if code, vout := e.run(nil, "verify"); code != 0 {
		t.Errorf("verify after the full-disk run: exit %d\n%s", code, vout)
	}
}

func (e *faultEnv) files() map[string][]byte {
	out := map[string][]byte{}
	_ = filepath.Walk(e.dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Name() == snapshot.LockName {
			return nil
		}
		rel, _ := filepath.Rel(e.dir, p)
		out[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		return nil
	})
	return out
}
