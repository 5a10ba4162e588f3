package serve

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// denyGuarded serves h behind Guard with DenyBypass on loopback.
func denyGuarded(t *testing.T, b *Bypasses) (addr string, reached *atomic.Int64) {
	t.Helper()
	reached = &atomic.Int64{}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = io.WriteString(w, "ok")
	})
	srv := NewServer(Guard(inner, nil, func(w http.ResponseWriter, r *http.Request, status int, msg string) {
		http.Error(w, msg, status)
	}, DenyBypass(b)))
	ln, _, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), reached
}

// A client that honours the proxy variables (as http.ProxyFromEnvironment
// does with ProxyEnv) reaches traceforge directly on loopback, and every
// call past the base URL is refused with 403, counted by host:port, never
// tunnelled or forwarded.
func TestDenyBypass(t *testing.T) {
	var b Bypasses
	addr, reached := denyGuarded(t, &b)
	proxyURL, _ := url.Parse("http://" + addr)
	client := &http.Client{Transport: &http.Transport{Proxy: func(r *http.Request) (*url.URL, error) {
		if IsLoopbackHost(r.URL.Hostname()) {
			return nil, nil // NO_PROXY=localhost,127.0.0.1,::1
		}
		return proxyURL, nil
	}}}

	resp, err := client.Get("http://" + addr + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("base-URL call: %v %v", resp, err)
	}
	resp.Body.Close()

	for i := 0; i < 2; i++ {
		if _, err := client.Get("https://api.openai.com/v1/models"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Fatalf("CONNECT: %v", err)
		}
	}
	resp, err = client.Get("http://llm.example.test:8080/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "GET llm.example.test:8080 refused (--deny-bypass)") {
		t.Fatalf("absolute-form: %d %s", resp.StatusCode, body)
	}
	if reached.Load() != 1 {
		t.Errorf("the handler saw %d requests, want only the base-URL call", reached.Load())
	}
	got := b.List()
	want := []Bypass{{Method: "CONNECT", Target: "api.openai.com:443", Count: 2}, {Method: "GET", Target: "llm.example.test:8080", Count: 1}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("bypasses %+v, want %+v", got, want)
	}
}

// Without DenyBypass the §10 answers stay: CONNECT 405, absolute-form 400.
func TestGuardWithoutDenyBypass(t *testing.T) {
	addr, reached := guarded(t, http.NotFoundHandler())
	if got := rawRequest(t, addr, "CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n"); got != http.StatusMethodNotAllowed {
		t.Errorf("CONNECT: %d", got)
	}
	if got := rawRequest(t, addr, "GET http://api.openai.com/v1/models HTTP/1.1\r\nHost: api.openai.com\r\n\r\n"); got != http.StatusBadRequest {
		t.Errorf("absolute-form: %d", got)
	}
	if reached.Load() != 0 {
		t.Error("a proxy-style request reached the handler")
	}
}

func TestBypassTargetDefaultPorts(t *testing.T) {
	var b Bypasses
	addr, _ := denyGuarded(t, &b)
	if got := rawRequest(t, addr, "GET https://api.example.test/x HTTP/1.1\r\nHost: api.example.test\r\n\r\n"); got != http.StatusForbidden {
		t.Fatalf("status %d", got)
	}
	if got := rawRequest(t, addr, "POST http://[::2]/x HTTP/1.1\r\nHost: [::2]\r\nContent-Length: 0\r\n\r\n"); got != http.StatusForbidden {
		t.Fatalf("status %d", got)
	}
	got := b.List()
	if len(got) != 2 || got[0].Target != "[::2]:80" || got[1].Target != "api.example.test:443" {
		t.Errorf("targets %+v", got)
	}
}

func TestProxyEnv(t *testing.T) {
	env := strings.Join(ProxyEnv("127.0.0.1:4000"), " ")
	for _, want := range []string{"HTTP_PROXY=http://127.0.0.1:4000", "HTTPS_PROXY=http://127.0.0.1:4000", "http_proxy=http://127.0.0.1:4000",
		"https_proxy=http://127.0.0.1:4000", "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"} {
		if !strings.Contains(env, want) {
			t.Errorf("missing %s in %s", want, env)
		}
	}
}
