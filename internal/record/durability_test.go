package record_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// --sync=after-answer (the default): once the application has an answer
// (plain or streamed), its snapshot file is in place with its complete,
// checked bytes although no fsync has finished; Finish waits for the
// deferred fsync of every file before it writes the manifest and returns.
func TestSyncAfterAnswerRenamesBeforeAnswerFlushesBeforeManifest(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	release := make(chan struct{})
	var mu sync.Mutex
	var flushed []string
	record.InjectFlushFault(p.rec, func(batch []snapshot.Renamed) error {
		<-release
		mu.Lock()
		defer mu.Unlock()
		for _, r := range batch {
			flushed = append(flushed, r.Rel)
		}
		return nil
	})
	var rels []string
	for _, req := range []map[string]any{openaiChat("Plain answer"), streamed(openaiChat("Streamed answer"))} {
		r := p.do("/v1/chat/completions", req, nil)
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		rel := "openai/" + r.header.Get(provider.HeaderSnapshotID) + ".json"
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("answer received but %s is not in place: %v", rel, err)
		}
		if _, fs := check.CheckBytes(rel, data, check.Options{}); fs.Errors() > 0 {
			t.Errorf("%s fails the per-file checks: %v", rel, fs)
		}
		rels = append(rels, rel)
	}
	if n := record.Flusher(p.rec).Pending(); n != 2 {
		t.Errorf("%d files wait for their flush, want 2", n)
	}
	done := make(chan struct{})
	go func() { p.finish(); close(done) }()
	select {
	case <-done:
		t.Fatal("Finish returned before the deferred fsyncs finished")
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := os.Stat(filepath.Join(dir, snapshot.ManifestName)); err == nil {
		t.Error("the manifest was written before its files were durable")
	}
	close(release)
	<-done
	s := p.rec.Finish()
	if s.Failed() || s.Recorded != 2 {
		t.Fatalf("want 2 recorded:\n%s", summaryText(s))
	}
	mu.Lock()
	got := strings.Join(flushed, " ")
	mu.Unlock()
	for _, rel := range rels {
		if !strings.Contains(got, rel) {
			t.Errorf("%s was never flushed (flushed: %s)", rel, got)
		}
	}
	if set := verifySet(t, dir); len(set.Manifest.Entries) != 2 {
		t.Errorf("manifest lists %d entries, want 2", len(set.Manifest.Entries))
	}
}

// A deferred fsync that fails is reported as a failed write: the run fails
// and the problem names the file and keeps the OS error.
func TestSyncAfterAnswerFlushFailureFailsTheRun(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	record.InjectFlushFault(p.rec, func(batch []snapshot.Renamed) error {
		return &os.PathError{Op: "syncfs", Path: dir, Err: syscall.EIO}
	})
	r := p.do("/v1/chat/completions", openaiChat("The disk fails later"), nil)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	rel := "openai/" + r.header.Get(provider.HeaderSnapshotID) + ".json"
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindWriteFailed) {
		t.Fatalf("a failed deferred fsync does not fail the run:\n%s", summaryText(s))
	}
	text := summaryText(s)
	for _, want := range []string{".ai-snapshots/" + rel, "input/output error", "--sync=before-answer"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary does not say %q:\n%s", want, text)
		}
	}
	if err := record.Flusher(p.rec).Wait(); !errors.Is(err, syscall.EIO) {
		t.Errorf("flusher error %v, want EIO", err)
	}
}

// --sync=before-answer keeps every write's own fsync (no deferred flush),
// as does a LockPerCommit recorder (the Go transport); an unknown mode is
// refused.
func TestSyncModes(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	for _, tc := range []struct {
		name     string
		mod      func(*record.Config)
		deferred bool
	}{
		{"default", nil, true},
		{"after-answer", func(c *record.Config) { c.Sync = record.SyncAfterAnswer }, true},
		{"before-answer", func(c *record.Config) { c.Sync = record.SyncBeforeAnswer }, false},
		{"lock per commit", func(c *record.Config) { c.LockPerCommit = true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := newProxy(t, dir, fake, tc.mod)
			if got := record.Flusher(p.rec) != nil; got != tc.deferred {
				t.Fatalf("deferred flush %v, want %v", got, tc.deferred)
			}
			r := p.do("/v1/chat/completions", openaiChat("Mode "+tc.name), nil)
			if _, err := os.Stat(filepath.Join(dir, "openai", r.header.Get(provider.HeaderSnapshotID)+".json")); err != nil {
				t.Fatalf("answer received, file missing: %v", err)
			}
			if s := p.finish(); s.Failed() || s.Recorded != 1 {
				t.Fatalf("want 1 recorded:\n%s", summaryText(s))
			}
		})
	}
	if _, err := record.ParseSync("always"); err == nil || !strings.Contains(err.Error(), "before-answer") {
		t.Errorf("ParseSync(always): %v", err)
	}
	if _, err := record.New(record.Config{Dir: t.TempDir(), Sync: "always"}); err == nil {
		t.Error("New accepts an unknown sync mode")
	}
}

// A lone client's calls share deferred flushes (the flush window), and
// Finish does not sit out the window: with a window of an hour, five
// answered calls make one flush, made when Finish waits for it.
func TestSyncAfterAnswerWindowSharesALoneClientsFlushes(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.FlushWindow = time.Hour })
	var mu sync.Mutex
	var batches []int
	record.InjectFlushFault(p.rec, func(batch []snapshot.Renamed) error {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, len(batch))
		return nil
	})
	for i := range 5 {
		if r := p.do("/v1/chat/completions", openaiChat(fmt.Sprintf("Call %d", i)), nil); r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	}
	done := make(chan struct{})
	go func() { p.finish(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Finish sat out the flush window")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 1 || batches[0] != 5 {
		t.Errorf("flushes made %v (files per flush), want one flush of 5", batches)
	}
}
