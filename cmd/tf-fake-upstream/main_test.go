package main

import (
	"bufio"
	"context"
	"encoding/json"
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
		code := run(ctx, []string{"-listen", "127.0.0.1:0", "-model-suffix", "-x", "-content-prefix", "P ", "-gzip", "-mint-ids"}, pw, &stderr)
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
	var env []string
	for range 4 {
		if !sc.Scan() {
			t.Fatal("output ends after", env)
		}
		env = append(env, sc.Text())
	}
	want := []string{"OPENAI_BASE_URL=" + base + "/v1", "ANTHROPIC_BASE_URL=" + base, "GOOGLE_GEMINI_BASE_URL=" + base, "OLLAMA_HOST=" + base}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Fatalf("env lines %q, want %q", env, want)
	}
	go io.Copy(io.Discard, pr)

	// -mint-ids: two identical Responses requests get different ids.
	var ids []string
	for range 2 {
		req, _ := http.NewRequest("POST", base+"/v1/responses", strings.NewReader(`{"model":"m","input":"hi"}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ ID string }
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil || r.ID == "" {
			t.Fatalf("responses: %v", err)
		}
		ids = append(ids, r.ID)
	}
	if ids[0] == ids[1] {
		t.Fatalf("-mint-ids: ids repeat: %v", ids)
	}

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
	if !strings.Contains(stderr.String(), "stopped after 3 requests") {
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
