package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is written by run and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-listen", "127.0.0.1:0", "-model-suffix", "-x", "-content-prefix", "P ", "-gzip"}, pw, &stderr)
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("no output")
	}
	first := sc.Text()
	url, ok := strings.CutPrefix(first, "FAKE_UPSTREAM_URL=http://127.0.0.1:")
	if !ok || url == "" {
		t.Fatalf("first line %q", first)
	}
	base := strings.TrimPrefix(first, "FAKE_UPSTREAM_URL=")
	go io.Copy(io.Discard, pr)

	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"model": "m-x"`) || !strings.Contains(string(b), `"P Echo: hi"`) || !resp.Uncompressed {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop")
	}
	if !strings.Contains(stderr.String(), "stopped after 1 requests") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-fail-status", "42"}, {"-listen", "256.0.0.1:99999"}} {
		var out, errOut syncBuffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
		if out.String() != "" {
			t.Errorf("%v: stdout %q", args, out.String())
		}
	}
	var out, errOut syncBuffer
	if code := run(context.Background(), []string{"-h"}, &out, &errOut); code != 0 || !strings.Contains(errOut.String(), "-reject-include-usage") {
		t.Errorf("-h: %d %q", code, errOut.String())
	}
}
