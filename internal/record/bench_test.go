package record_test

import (
	"bytes"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// BenchmarkRecordCall: one distinct OpenAI chat call through the recording
// proxy, snapshot checked and renamed into place before the answer
// completes (fsync'd after it: Config.Sync's default).
func BenchmarkRecordCall(b *testing.B) { benchmarkRecordCall(b, record.SyncAfterAnswer) }

// BenchmarkRecordCallSyncBeforeAnswer: the same with the fsyncs before the
// answer completes (--sync=before-answer).
func BenchmarkRecordCallSyncBeforeAnswer(b *testing.B) {
	benchmarkRecordCall(b, record.SyncBeforeAnswer)
}

// BenchmarkRecordCallParallel: distinct calls from 32 concurrent clients
// (the bench's throughput shape); ns/op is wall time per call with every
// client busy.
func BenchmarkRecordCallParallel(b *testing.B) {
	defer record.WithoutFullCheck()()
	fake, err := fakeupstream.Start(fakeupstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	rec, err := record.New(record.Config{Dir: b.TempDir(), Upstreams: map[provider.Name]string{provider.OpenAI: fake.URL + "/v1", provider.Anthropic: fake.URL}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.SetParallelism(16) // 32 clients on 2 cores
	defer snapshottest.ReportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			doRecordCall(b, client, srv.URL, int(n.Add(1)))
		}
	})
	b.StopTimer()
	if s := rec.Finish(); s.Failed() {
		var buf bytes.Buffer
		render.Record(&buf, s, false)
		b.Fatal(buf.String())
	}
}

func doRecordCall(b *testing.B, client *http.Client, url string, i int) {
	body := fmt.Sprintf(`{"model":"gpt-4o-mini","temperature":0,"seed":42,"max_tokens":50,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Question number %d about snapshot testing"}]}`, i)
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set("X-Traceforge-Source", "app/a.go:1:f")
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Error(resp.Status)
	}
}

func benchmarkRecordCall(b *testing.B, sync record.Sync) {
	benchRecordCalls(b, sync, func(url string, i int) { doRecordCall(b, http.DefaultClient, url, i) })
}

// benchRecordCalls runs call(url, i) with i = 1, 2, … in the benchmark loop
// against a recording proxy (sync) in front of a fake upstream, reporting
// CPU per call; the recording must finish without a problem.
func benchRecordCalls(b *testing.B, sync record.Sync, call func(url string, i int)) {
	defer record.WithoutFullCheck()()
	fake, err := fakeupstream.Start(fakeupstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	rec, err := record.New(record.Config{Dir: b.TempDir(), Upstreams: map[provider.Name]string{provider.OpenAI: fake.URL + "/v1", provider.Anthropic: fake.URL}, ManifestInterval: -1, Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	defer srv.Close()
	i := 0
	stop := snapshottest.ReportCPU(b)
	for b.Loop() {
		i++
		call(srv.URL, i)
	}
	stop()
	b.StopTimer()
	if s := rec.Finish(); s.Failed() {
		var buf bytes.Buffer
		render.Record(&buf, s, false)
		b.Fatal(buf.String())
	}
}

// BenchmarkRecordCallBench: one distinct call of the benchmark's own shape
// (bench/gen: a 1.2 KB system prompt, three turns, half OpenAI chat, half
// Anthropic messages; ~6 KB snapshot files) through the recording proxy,
// the default sync. This is the call `make bench`'s record latency row makes.
func BenchmarkRecordCallBench(b *testing.B) {
	benchRecordCalls(b, record.SyncAfterAnswer, func(url string, i int) {
		g := gen.HTTPRequest(i, false)
		req, _ := http.NewRequest("POST", url+g.Path, bytes.NewReader(g.Body))
		req.Header = g.Header
		req.Header.Set("X-Traceforge-Source", "app/a.go:1:f")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	})
}
