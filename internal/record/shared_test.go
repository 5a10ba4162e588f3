package record_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

func shared(c *record.Config) { c.LockPerCommit = true }

// Several recorders sharing one folder (as parallel test processes do) end
// with a valid set whose manifest lists every file, whatever the order of
// their commits.
func TestLockPerCommitParallelRecorders(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	const recorders, calls = 4, 12
	var wg sync.WaitGroup
	sums := make([]*result.RecordSummary, recorders)
	for i := 0; i < recorders; i++ {
		p := newProxy(t, dir, fake, shared)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < calls; j++ {
				// Half the calls are shared by every recorder, half are their own.
				prompt := fmt.Sprintf("Shared question %d", j)
				if j%2 == 1 {
					prompt = fmt.Sprintf("Question %d of recorder %d", j, i)
				}
				body := openaiChat(prompt)
				path := "/v1/chat/completions"
				if j%3 == 0 {
					body, path = streamed(anthropicMsg(prompt)), "/v1/messages"
				}
				if r, err := send(p.srv.URL+path, body, nil); err != nil || r.status != 200 {
					t.Errorf("recorder %d call %d: %v %d", i, j, err, r.status)
				}
			}
			sums[i] = p.finish()
		}(i)
	}
	wg.Wait()
	for i, s := range sums {
		if s.Failed() {
			t.Errorf("recorder %d:\n%s", i, summaryText(s))
		}
	}
	set := verifySet(t, dir)
	want := calls/2 + recorders*calls/2
	if n := len(snapshots(t, dir)); n != want {
		t.Errorf("%d snapshot files, want %d", n, want)
	}
	if set.Manifest == nil || len(set.Manifest.Entries) != want {
		t.Fatalf("manifest does not list the %d files", want)
	}
	noKeyOnDisk(t, dir)

	// A second round re-records nothing: not a byte changes.
	before := files(t, dir)
	for i := 0; i < 2; i++ {
		p := newProxy(t, dir, fake, shared)
		for j := 0; j < calls; j += 2 {
			body, path := openaiChat(fmt.Sprintf("Shared question %d", j)), "/v1/chat/completions"
			if j%3 == 0 {
				body, path = streamed(anthropicMsg(fmt.Sprintf("Shared question %d", j))), "/v1/messages"
			}
			p.do(path, body, nil)
		}
		if s := p.finish(); s.Failed() || s.Unchanged != calls/2 {
			t.Fatalf("re-record:\n%s", summaryText(s))
		}
	}
	after := files(t, dir)
	delete(before, ".lock")
	delete(after, ".lock")
	for rel, b := range before {
		if !bytes.Equal(b, after[rel]) {
			t.Errorf("%s changed on an unchanged re-record", rel)
		}
	}
}

// The recorder never holds the lock between commits; a commit waits for
// the lock and gives up after LockTimeout, listing the call.
func TestLockPerCommitWaitsForTheLock(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	st := &snapshot.Store{Dir: dir}
	p := newProxy(t, dir, fake, func(c *record.Config) { shared(c); c.LockTimeout = 300 * time.Millisecond })
	p.do("/v1/chat/completions", openaiChat("First"), nil)

	// The commit may still be finishing when the client has the whole
	// answer; it must release the lock promptly, not hold it till the next.
	unlock, err := st.LockWait(5 * time.Second)
	if err != nil {
		t.Fatalf("the recorder holds the lock between commits: %v", err)
	}
	go func(unlock func()) { time.Sleep(100 * time.Millisecond); unlock() }(unlock)
	start := time.Now()
	p.do("/v1/chat/completions", openaiChat("Second, after waiting"), nil)
	if time.Since(start) < 80*time.Millisecond {
		t.Errorf("the commit did not wait for the lock")
	}

	unlock, err = st.LockWait(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.do("/v1/chat/completions", openaiChat("Third, lock never released"), nil)
	unlock()
	s := p.finish()
	if s.Recorded != 2 || !hasKind(s, record.KindWriteFailed) || len(s.Problems) != 1 {
		t.Fatalf("want 2 recorded and one write failure:\n%s", summaryText(s))
	}
	if !bytes.Contains([]byte(summaryText(s)), []byte("locked")) {
		t.Errorf("the problem does not say the folder was locked:\n%s", summaryText(s))
	}
	if set := verifySet(t, dir); len(set.Manifest.Entries) != 2 {
		t.Errorf("manifest lists %d entries, want 2", len(set.Manifest.Entries))
	}
	if _, err := p.rec.Prune(); err == nil {
		t.Error("Prune ran on a shared folder")
	}
}

// A file written by another process after New is merged, not dropped, and
// an id it took for a different request is a collision.
func TestLockPerCommitMergesTheFolderAsItIsNow(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, shared)

	// Another process records a snapshot and its manifest meanwhile.
	other := newProxy(t, dir, fake, shared)
	other.do("/v1/messages", anthropicMsg("From another process"), nil)
	if s := other.finish(); s.Failed() {
		t.Fatal(summaryText(s))
	}
	// ... and plants a record of another request under the id request Y
	// will get.
	y := openaiChat("Request Y")
	_, yID, err := snapshottest.Build(snapshottest.Item{Provider: "openai", Request: y, Response: snapshottest.OpenAIChat("x").Response,
		Source: source.Source{File: "a.go", Line: 1, Function: "f"}, Time: snapshottest.BaseTime})
	if err != nil {
		t.Fatal(err)
	}
	xDoc, _, err := snapshottest.Build(snapshottest.AnthropicMessage("Request X"))
	if err != nil {
		t.Fatal(err)
	}
	xRec := xDoc["snapshots"].([]any)[0].(map[string]any)
	xRec["id"] = yID
	if err := snapshot.Rehash(xRec); err != nil {
		t.Fatal(err)
	}
	xDoc, _ = snapshot.FileDocument(xRec)
	data, _ := snapshot.MarshalFile(xDoc)
	if err := (&snapshot.Store{Dir: dir}).WriteAtomic("anthropic/"+yID+".json", data); err != nil {
		t.Fatal(err)
	}

	p.do("/v1/chat/completions", openaiChat("From this process"), nil)
	p.do("/v1/chat/completions", y, nil)
	s := p.finish()
	if s.Recorded != 1 || s.Refused != 1 || !hasKind(s, record.KindCollision) {
		t.Fatalf("want 1 recorded, one collision:\n%s", summaryText(s))
	}
	if _, err := os.Stat(filepath.Join(dir, "openai", yID+".json")); err == nil {
		t.Error("the colliding call was written")
	}
	m := readManifest(t, dir)
	if len(m) != 2 {
		t.Errorf("manifest = %v, want both processes' snapshots", m)
	}
}

// A valid file the manifest does not list (a process killed between its two
// writes) is added when the next recorder finishes.
func TestLockPerCommitCompletesTheManifest(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	if _, err := snapshottest.WriteSet(dir, snapshottest.OpenAIChat("one"), snapshottest.OpenAIChat("two")); err != nil {
		t.Fatal(err)
	}
	_, id, err := snapshottest.Build(snapshottest.OpenAIChat("three"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := snapshottest.Build(snapshottest.OpenAIChat("three"))
	data, _ := snapshot.MarshalFile(doc)
	if err := (&snapshot.Store{Dir: dir}).WriteAtomic("openai/"+id+".json", data); err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, dir, fake, shared)
	if s := p.finish(); s.Failed() {
		t.Fatal(summaryText(s))
	}
	if m := readManifest(t, dir); len(m) != 3 || m["openai/"+id+".json"] == "" {
		t.Fatalf("manifest = %v, want the unlisted file added", m)
	}
	verifySet(t, dir)

	// A run with nothing to do writes nothing at all.
	empty := filepath.Join(t.TempDir(), ".ai-snapshots")
	p = newProxy(t, empty, fake, shared)
	p.finish()
	if _, err := os.Stat(empty); err == nil {
		t.Error("an idle shared recorder created the snapshot folder")
	}
}

// Two processes calling the same request from different places settle on
// one source instead of rewriting it on every run; a call that moved to
// another line of the same function still updates it.
func TestLockPerCommitSourceSettles(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	body := openaiChat("Asked from two packages")
	srcOf := func() string {
		for _, b := range snapshots(t, dir) {
			s := readRecord(t, b)["source"].(map[string]any)
			return fmt.Sprintf("%s:%s:%s", s["file"], s["line"], s["function"])
		}
		return ""
	}
	run := func(src string) {
		p := newProxy(t, dir, fake, shared)
		p.do("/v1/chat/completions", body, map[string]string{"X-Traceforge-Source": src})
		if s := p.finish(); s.Failed() {
			t.Fatal(summaryText(s))
		}
	}
	run("pkg/b/b_test.go:20:TestB")
	run("pkg/a/a_test.go:10:TestA")
	if got := srcOf(); got != "pkg/a/a_test.go:10:TestA" {
		t.Fatalf("source = %s, want the smaller one", got)
	}
	before := files(t, dir)
	run("pkg/b/b_test.go:20:TestB")
	if got := srcOf(); got != "pkg/a/a_test.go:10:TestA" {
		t.Fatalf("source = %s, want it kept", got)
	}
	if !bytes.Equal(before["manifest.json"], files(t, dir)["manifest.json"]) {
		t.Error("the manifest changed")
	}
	run("pkg/a/a_test.go:14:TestA")
	if got := srcOf(); got != "pkg/a/a_test.go:14:TestA" {
		t.Fatalf("source = %s, want the moved line", got)
	}
	verifySet(t, dir)
}

// Target sends a call to exactly the URL it names.
func TestTargetNamesTheUpstream(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) {
		c.Upstreams[provider.OpenAI] = "http://127.0.0.1:1/v1" // never used
		c.Target = func(r *http.Request) *url.URL {
			u, _ := url.Parse(fake.URL + "/gateway" + r.URL.Path + "?team=a")
			return u
		}
	})
	r := p.do("/v1/chat/completions", openaiChat("Through a gateway"), nil)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if got := fake.LastRequest(); got.Path != "/gateway/v1/chat/completions" || got.RawQuery != "team=a" {
		t.Errorf("upstream got %s?%s", got.Path, got.RawQuery)
	}
	if s := p.finish(); s.Failed() || s.Recorded != 1 {
		t.Fatal(summaryText(s))
	}
}

func readManifest(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Snapshots []struct{ File, Hash string }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range m.Snapshots {
		out[e.File] = e.Hash
	}
	return out
}

// Concurrent calls through one LockPerCommit recorder are committed as a
// group: while another process holds the lock, the calls queue; once it is
// released, one lock hold writes them all and merges the manifest once, and
// every call still returns only after its file is on disk.
func TestLockPerCommitGroupCommit(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	st := &snapshot.Store{Dir: dir}
	p := newProxy(t, dir, fake, shared)
	p.do("/v1/chat/completions", openaiChat("First"), nil)
	_, before := record.CommitQueue(p.rec)

	unlock, err := st.LockWait(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const calls = 12
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := send(p.srv.URL+"/v1/chat/completions", openaiChat(fmt.Sprintf("Grouped question %d", i)), nil)
			if err != nil || r.status != 200 {
				t.Errorf("call %d: %v %d", i, err, r.status)
				return
			}
			// The answer arrived: the file is on disk already.
			if n := len(snapshots(t, dir)); n < 2 {
				t.Errorf("call %d answered with %d files on disk", i, n)
			}
		}()
	}
	// The first call waits for the lock; the others queue behind it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if q, _ := record.CommitQueue(p.rec); q == calls-1 {
			break
		}
		if time.Now().After(deadline) {
			q, _ := record.CommitQueue(p.rec)
			t.Fatalf("only %d of %d calls queued for the commit", q, calls-1)
		}
		time.Sleep(5 * time.Millisecond)
	}
	unlock()
	wg.Wait()
	if _, after := record.CommitQueue(p.rec); after-before != 2 {
		t.Errorf("%d concurrent calls took %d commit groups, want 2 (the one waiting for the lock, then the rest together)", calls, after-before)
	}
	if s := p.finish(); s.Failed() || s.Recorded != calls+1 {
		t.Fatalf("want %d recorded:\n%s", calls+1, summaryText(s))
	}
	if set := verifySet(t, dir); len(set.Manifest.Entries) != calls+1 {
		t.Errorf("manifest lists %d entries, want %d", len(set.Manifest.Entries), calls+1)
	}
}
