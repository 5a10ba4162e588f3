package traceforge_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// testKey looks like a real OpenAI key; it must never reach the folder.
var testKey = "sk-proj-" + strings.Repeat("A", 74) + "T3BlbkFJ" + strings.Repeat("A", 74)

func startAPI(t *testing.T, opts fakeupstream.Options) *fakeupstream.Server {
	t.Helper()
	api, err := fakeupstream.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	return api
}

func newTransport(t *testing.T, mode traceforge.Mode, dir string) *traceforge.Transport {
	t.Helper()
	tr, err := traceforge.NewTransport(traceforge.Options{Mode: mode, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func client(tr *traceforge.Transport, baseURL string) *openai.Client {
	cfg := openai.DefaultConfig(testKey)
	cfg.BaseURL = baseURL
	cfg.HTTPClient = tr.Client()
	return openai.NewClientWithConfig(cfg)
}

// validSet fails unless dir passes every static check; it returns the
// number of snapshot files.
func validSet(t *testing.T, dir string) int {
	t.Helper()
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Findings {
		if f.Severity == finding.Error {
			t.Errorf("static check: %s", f.Error())
		}
	}
	if set.Manifest == nil || len(set.Manifest.Entries) != set.Files {
		t.Errorf("the manifest does not list the %d files", set.Files)
	}
	return set.Files
}

func snapshotFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if _, _, ok := snapshot.ValidRelPath(filepath.ToSlash(rel)); ok {
			out[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return nil
	})
	return out
}

func TestTransportRecordThenReplayOffline(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	questions := []string{"Summarize snapshot testing", "Explain replay"}

	tr := newTransport(t, traceforge.Record, dir)
	var recorded []string
	for _, q := range questions {
		a, err := ask(tr, api.URL+"/v1", q)
		if err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, a)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n := validSet(t, dir); n != 2 {
		t.Fatalf("%d snapshots, want 2", n)
	}
	// The source is the helper that called the SDK, relative to the module.
	for rel, b := range snapshotFiles(t, dir) {
		if !bytes.Contains(b, []byte(`"file": "example_transport_test.go"`)) || !bytes.Contains(b, []byte(`"function": "ask"`)) {
			t.Errorf("%s: source is not the caller:\n%s", rel, b)
		}
		if bytes.Contains(b, []byte(testKey)) || bytes.Contains(b, []byte("T3BlbkFJ")) {
			t.Errorf("%s holds the API key", rel)
		}
	}

	api.Close()
	before := api.Requests()
	tr = newTransport(t, traceforge.Replay, dir)
	for i, q := range questions {
		a, err := ask(tr, api.URL+"/v1", q)
		if err != nil || a != recorded[i] {
			t.Errorf("replay %q = %q, %v; want %q", q, a, err, recorded[i])
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if api.Requests() != before {
		t.Error("replay contacted the API")
	}
	if _, err := ask(tr, api.URL+"/v1", questions[0]); err == nil {
		t.Error("RoundTrip after Close succeeded")
	}
}

// A replay miss is a provider-shaped 404 that go-openai does not retry, and
// Close reports it as drift with a diff.
func TestTransportReplayMissIsDrift(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr := newTransport(t, traceforge.Record, dir)
	if _, err := ask(tr, api.URL+"/v1", "Known question"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	api.Close()

	tr = newTransport(t, traceforge.Replay, dir)
	_, err := ask(tr, api.URL+"/v1", "Changed question")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusNotFound {
		t.Fatalf("miss: err = %v, want an *openai.APIError with 404", err)
	}
	if _, err := ask(tr, api.URL+"/v1", "Known question"); err != nil {
		t.Errorf("hit after a miss: %v", err)
	}
	err = tr.Close()
	var te *traceforge.Error
	if !errors.Is(err, traceforge.ErrDrift) || !errors.As(err, &te) {
		t.Fatalf("Close = %v, want ErrDrift", err)
	}
	for _, want := range []string{`-        "content": "Known question"`, `+        "content": "Changed question"`, "from example_transport_test.go:", "TRACEFORGE_MODE=missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("drift report lacks %q:\n%v", want, err)
		}
	}
	if errors.Is(err, traceforge.ErrNotSnapshotted) || errors.Is(err, traceforge.ErrInvalidSet) {
		t.Error("drift matches the other sentinels")
	}
	if again := tr.Close(); again != err {
		t.Error("Close is not idempotent")
	}
}

// Replay refuses a set that fails a static check, and a missing folder.
func TestTransportReplayRefusesInvalidSet(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	_, err := traceforge.NewTransport(traceforge.Options{Dir: dir})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing folder: err = %v, want fs.ErrNotExist", err)
	}

	tr := newTransport(t, traceforge.Record, dir)
	if _, err := ask(tr, api.URL+"/v1", "Soon tampered"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	for rel, b := range snapshotFiles(t, dir) {
		b = bytes.Replace(b, []byte("Echo: Soon tampered"), []byte("Echo: tampered!!!!"), 1)
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []traceforge.Mode{traceforge.Replay, traceforge.RecordMissing} {
		_, err = traceforge.NewTransport(traceforge.Options{Mode: mode, Dir: dir})
		var te *traceforge.Error
		if !errors.Is(err, traceforge.ErrInvalidSet) || !errors.As(err, &te) {
			t.Fatalf("%v: err = %v, want ErrInvalidSet", mode, err)
		}
		if !strings.Contains(te.Details, "record-hash") {
			t.Errorf("%v: the error does not name the failed check:\n%v", mode, err)
		}
	}
}

// RecordMissing answers known calls from the folder without contacting the
// API and records only the new ones.
func TestTransportRecordMissing(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr := newTransport(t, traceforge.Record, dir)
	if _, err := ask(tr, api.URL+"/v1", "Known question"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	before := snapshotFiles(t, dir)
	calls := api.Requests()

	tr = newTransport(t, traceforge.RecordMissing, dir)
	if a, err := ask(tr, api.URL+"/v1", "Known question"); err != nil || a != "Echo: Known question" {
		t.Fatalf("hit: %q, %v", a, err)
	}
	if api.Requests() != calls {
		t.Fatal("a hit contacted the API")
	}
	if _, err := ask(tr, api.URL+"/v1", "New question"); err != nil {
		t.Fatal(err)
	}
	if api.Requests() != calls+1 {
		t.Fatalf("API got %d requests, want the miss only", api.Requests()-calls)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	after := snapshotFiles(t, dir)
	if len(after) != 2 {
		t.Fatalf("%d snapshots, want 2", len(after))
	}
	for rel, b := range before {
		if !bytes.Equal(b, after[rel]) {
			t.Errorf("%s changed", rel)
		}
	}
	validSet(t, dir)
}

// Calls the API refuses are passed to the application and listed by Close.
func TestTransportRecordReportsUnsnapshottedCalls(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{FailStatus: http.StatusBadRequest})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr := newTransport(t, traceforge.Record, dir)
	_, err := ask(tr, api.URL+"/v1", "Refused")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest {
		t.Fatalf("err = %v, want the API's 400", err)
	}
	err = tr.Close()
	if !errors.Is(err, traceforge.ErrNotSnapshotted) || !strings.Contains(err.Error(), "upstream answered 400") {
		t.Fatalf("Close = %v, want ErrNotSnapshotted listing the call", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Error("the error shows the API key")
	}
}

// Two Transports recording into one folder at the same time, as parallel
// test packages do, leave a valid set.
func TestTransportParallelRecorders(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tr, err := traceforge.NewTransport(traceforge.Options{Mode: traceforge.Record, Dir: dir})
			if err != nil {
				t.Error(err)
				return
			}
			for j := 0; j < 8; j++ {
				q := fmt.Sprintf("Shared question %d", j)
				if j%2 == 1 {
					q = fmt.Sprintf("Question %d of transport %d", j, i)
				}
				if _, err := ask(tr, api.URL+"/v1", q); err != nil {
					t.Error(err)
				}
			}
			if err := tr.Close(); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if n := validSet(t, dir); n != 4+2*4 {
		t.Errorf("%d snapshots, want 12", n)
	}
}

// Two processes recording into one folder at the same time (go test ./...
// runs packages in parallel) leave a valid set. The test binary runs
// itself as the two recorders.
func TestTransportParallelProcesses(t *testing.T) {
	if os.Getenv("TRACEFORGE_TEST_CHILD") != "" {
		t.Skip("child")
	}
	api := startAPI(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTransportRecorderProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TRACEFORGE_TEST_CHILD="+strconv.Itoa(i), "TRACEFORGE_TEST_DIR="+dir, "TRACEFORGE_TEST_API="+api.URL+"/v1")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("recorder process: %v\n%s", err, out)
			}
		}()
	}
	wg.Wait()
	if n := validSet(t, dir); n != 10+2*10 {
		t.Errorf("%d snapshots, want 30", n)
	}
}

// TestTransportRecorderProcess is one recorder of TestTransportParallelProcesses.
func TestTransportRecorderProcess(t *testing.T) {
	child := os.Getenv("TRACEFORGE_TEST_CHILD")
	if child == "" {
		t.Skip("run by TestTransportParallelProcesses")
	}
	tr := newTransport(t, traceforge.Record, os.Getenv("TRACEFORGE_TEST_DIR"))
	for j := 0; j < 20; j++ {
		q := fmt.Sprintf("Shared question %d", j)
		if j%2 == 1 {
			q = fmt.Sprintf("Question %d of process %s", j, child)
		}
		if _, err := ask(tr, os.Getenv("TRACEFORGE_TEST_API"), q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
}

// The first event of a stream reaches the application while the API is
// still sending the rest.
func TestTransportStreamsAsItArrives(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{ChunkDelay: 100 * time.Millisecond})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr := newTransport(t, traceforge.Record, dir)
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"one two three four five six"}],"temperature":0,"seed":1,"max_tokens":20,"stream":true}`
	req, _ := http.NewRequest(http.MethodPost, api.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := tr.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var first time.Duration
	events := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			if events == 0 {
				first = time.Since(start)
			}
			events++
		}
	}
	resp.Body.Close()
	total := time.Since(start)
	if events < 4 || first > total/2 {
		t.Errorf("%d events; first after %v of %v: the stream was buffered", events, first, total)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	validSet(t, dir)
}

// A body the application closes early does not lose the call: it completes
// in the background and Close waits for it.
func TestTransportBodyClosedEarly(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{ChunkDelay: 10 * time.Millisecond})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr := newTransport(t, traceforge.Record, dir)
	stream, err := client(tr, api.URL+"/v1").CreateChatCompletionStream(t.Context(), chatRequest("one two three four five six seven"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n := validSet(t, dir); n != 1 {
		t.Errorf("%d snapshots, want 1", n)
	}
}

func TestModeFromEnv(t *testing.T) {
	for v, want := range map[string]traceforge.Mode{
		"": traceforge.Replay, "replay": traceforge.Replay, "record": traceforge.Record,
		"RECORD": traceforge.Record, "missing": traceforge.RecordMissing, " missing ": traceforge.RecordMissing,
	} {
		t.Setenv(traceforge.ModeEnv, v)
		if got := traceforge.ModeFromEnv(); got != want {
			t.Errorf("%s=%q: %v, want %v", traceforge.ModeEnv, v, got, want)
		}
	}
	t.Setenv(traceforge.ModeEnv, "recrod")
	_, err := traceforge.NewTransport(traceforge.Options{Mode: traceforge.ModeFromEnv(), Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `"recrod"`) {
		t.Errorf("unknown mode: err = %v", err)
	}
}

// The default folder is .ai-snapshots at the module root, whatever the
// working directory below it.
func TestTransportDefaultDir(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "internal", "llm")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	_, err := traceforge.NewTransport(traceforge.Options{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "snapshot folder .ai-snapshots:") {
		t.Fatalf("err = %v, want the module root's .ai-snapshots named", err)
	}
	api := startAPI(t, fakeupstream.Options{})
	tr := newTransport(t, traceforge.Record, "")
	req, _ := http.NewRequest(http.MethodPost, api.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":1,"max_tokens":5}`))
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set(traceforge.SourceHeader, "app.go:1:main")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	validSet(t, filepath.Join(root, ".ai-snapshots"))
}

// A request whose context is done fails with the context's error, as with
// any transport.
func TestTransportCanceledContext(t *testing.T) {
	api := startAPI(t, fakeupstream.Options{FirstByteDelay: 2 * time.Second})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr := newTransport(t, traceforge.Record, dir)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client(tr, api.URL+"/v1").CreateChatCompletion(ctx, chatRequest("Too slow"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("err = %v after %v, want the deadline", err, time.Since(start))
	}
	if err := tr.Close(); !errors.Is(err, traceforge.ErrNotSnapshotted) {
		t.Fatalf("Close = %v, want the abandoned call listed", err)
	}
}
