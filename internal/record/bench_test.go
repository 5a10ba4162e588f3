package record_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
)

// BenchmarkRecordCall: one distinct OpenAI chat call through the recording
// proxy, snapshot checked and written atomically (fsync) before the answer
// completes.
func BenchmarkRecordCall(b *testing.B) {
	fake, err := fakeupstream.Start(fakeupstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	rec, err := record.New(record.Config{Dir: b.TempDir(), OpenAIUpstream: fake.URL + "/v1", AnthropicUpstream: fake.URL, ManifestInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	defer srv.Close()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","temperature":0,"seed":42,"max_tokens":50,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Question number %d about snapshot testing"}]}`, i)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer x")
		req.Header.Set("X-Traceforge-Source", "app/a.go:1:f")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
	b.StopTimer()
	if s := rec.Finish(); s.Failed() {
		var buf bytes.Buffer
		s.Write(&buf, false)
		b.Fatal(buf.String())
	}
}
