package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.5.6.7": true, "::1": true, "[::1]": true,
		"": false, "localhost.evil.example": false, "127.0.0.1.nip.io": false, "evil.example": false,
		"0.0.0.0": false, "10.0.0.1": false, "::": false, "[::ffff:10.0.0.1]": false, "2130706433": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// guarded serves h behind Guard (and NewServer's timeouts) on loopback.
func guarded(t *testing.T, h http.Handler, allow ...string) (addr string, reached *atomic.Int64) {
	t.Helper()
	reached = &atomic.Int64{}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		h.ServeHTTP(w, r)
	})
	srv := NewServer(Guard(inner, allow, func(w http.ResponseWriter, r *http.Request, status int, msg string) {
		http.Error(w, msg, status)
	}))
	ln, _, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), reached
}

// rawRequest writes req verbatim on a new TCP connection and returns the
// status code of the answer (0 when the connection closed without one).
func rawRequest(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Every request shape the guard must refuse, written as raw bytes so that no
// client library normalizes it first (DESIGN §10).
func TestGuardRefusesProxyAbuse(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			if IsMaxBytes(err) {
				http.Error(w, "too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, "ok")
	})
	addr, reached := guarded(t, ok, "box.lan")
	cases := []struct {
		name   string
		req    string
		status int
	}{
		{"loopback ip", "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n", 200},
		{"other 127/8", "GET / HTTP/1.1\r\nHost: 127.5.6.7\r\n\r\n", 200},
		{"localhost", "GET / HTTP/1.1\r\nHost: LocalHost:8787\r\n\r\n", 200},
		{"ipv6 loopback", "GET / HTTP/1.1\r\nHost: [::1]:8787\r\n\r\n", 200},
		{"allowed name", "GET / HTTP/1.1\r\nHost: box.lan:8787\r\n\r\n", 200},
		{"rebinding name", "GET / HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 403},
		{"rebinding name with port", "GET / HTTP/1.1\r\nHost: attacker.example:8787\r\n\r\n", 403},
		{"loopback-looking name", "GET / HTTP/1.1\r\nHost: localhost.attacker.example\r\n\r\n", 403},
		{"loopback ip as name", "GET / HTTP/1.1\r\nHost: 127.0.0.1.nip.io\r\n\r\n", 403},
		{"private address", "GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", 403},
		{"all interfaces", "GET / HTTP/1.1\r\nHost: 0.0.0.0:8787\r\n\r\n", 403},
		{"x-forwarded-host ignored", "GET / HTTP/1.1\r\nHost: attacker.example\r\nX-Forwarded-Host: localhost\r\n\r\n", 403},
		{"absolute form", "GET http://attacker.example/v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n\r\n", 400},
		{"absolute form to loopback", "GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400},
		{"connect", "CONNECT attacker.example:443 HTTP/1.1\r\nHost: attacker.example:443\r\n\r\n", 405},
		{"connect to loopback", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", 405},
		{"declared oversized body", fmt.Sprintf("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n", MaxRequestBody+1), 413},
	}
	// net/http answers "OPTIONS *" itself (200, empty): it never reaches
	// the proxy, so it cannot be forwarded anywhere.
	before := reached.Load()
	if got := rawRequest(t, addr, "OPTIONS * HTTP/1.1\r\nHost: attacker.example\r\n\r\n"); got != 200 || reached.Load() != before {
		t.Errorf("OPTIONS *: status %d, handler reached %v", got, reached.Load() != before)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			got := rawRequest(t, addr, tc.req)
			if got != tc.status {
				t.Errorf("status %d, want %d", got, tc.status)
			}
			if passed := reached.Load() > before; passed != (tc.status == 200) {
				t.Errorf("handler reached = %v for status %d", passed, tc.status)
			}
		})
	}
}

// A chunked body (no Content-Length) over the cap is cut at the cap: 413,
// and the handler never holds more than MaxRequestBody bytes.
func TestGuardCapsChunkedBody(t *testing.T) {
	var got atomic.Int64
	addr, _ := guarded(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		got.Store(n)
		if IsMaxBytes(err) {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	pr, pw := io.Pipe()
	go func() {
		chunk := make([]byte, 1<<20)
		for i := 0; i < (MaxRequestBody>>20)+8; i++ {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", pr)
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// The server may close the connection while the client still sends.
		if got.Load() > MaxRequestBody {
			t.Fatalf("handler read %d bytes, over the cap", got.Load())
		}
		return
	}
	resp.Body.Close()
	pr.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
	if got.Load() > MaxRequestBody {
		t.Errorf("handler read %d bytes, over the %d cap", got.Load(), MaxRequestBody)
	}
}

func withHeaderTimeout(t *testing.T, d time.Duration) {
	old := readHeaderTimeout
	readHeaderTimeout = d
	t.Cleanup(func() { readHeaderTimeout = old })
}

// Slowloris: a client that never finishes its headers is dropped after
// ReadHeaderTimeout, while normal requests on other connections go on.
func TestSlowHeadersDropped(t *testing.T) {
	withHeaderTimeout(t, 300*time.Millisecond)
	if NewServer(nil).ReadHeaderTimeout != 300*time.Millisecond {
		t.Fatal("NewServer does not use readHeaderTimeout")
	}
	addr, _ := guarded(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	const slow = 8
	closed := make(chan time.Duration, slow)
	for i := 0; i < slow; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func(c net.Conn) {
			start := time.Now()
			_, _ = io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n")
			// Trickle one header byte at a time, never ending the headers.
			go func() {
				for j := 0; j < 40; j++ {
					if _, err := io.WriteString(c, "X"); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, err := io.Copy(io.Discard, c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				closed <- -1
				return
			}
			closed <- time.Since(start)
		}(c)
	}
	// Normal traffic is served while the slow connections hang.
	for i := 0; i < 5; i++ {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("normal request during slowloris: %v", err)
		}
		resp.Body.Close()
		time.Sleep(40 * time.Millisecond)
	}
	for i := 0; i < slow; i++ {
		d := <-closed
		if d < 0 || d > 2*time.Second {
			t.Fatalf("slow-header connection not dropped (after %v)", d)
		}
	}
}

// No write timeout: a stream slower than every server timeout completes.
func TestLongSlowStreamCompletes(t *testing.T) {
	withHeaderTimeout(t, 100*time.Millisecond)
	const events = 8
	addr, _ := guarded(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < events; i++ {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(150 * time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("stream broke: %v", err)
	}
	if n := strings.Count(string(b), "data: "); n != events+1 {
		t.Errorf("%d events, want %d", n, events+1)
	}
}

func TestListenWarnsOnAllInterfaces(t *testing.T) {
	for addr, warn := range map[string]bool{"": false, "127.0.0.1:0": false, "localhost:0": false, ":0": true, "0.0.0.0:0": true} {
		ln, w, err := Listen(addr)
		if err != nil {
			t.Fatalf("Listen(%q): %v", addr, err)
		}
		ln.Close()
		if (w != "") != warn {
			t.Errorf("Listen(%q) warning %q, want warning=%v", addr, w, warn)
		}
	}
	if _, _, err := Listen("nonsense"); !errors.Is(err, ErrBind) {
		t.Errorf("bad address: %v, want ErrBind", err)
	}
}

// TestRedactURL (DESIGN §12.10.4): no user info, every query value
// REDACTED with its name kept, a bare entry replaced whole; RedactURLIn
// scrubs an error text that quotes the URL or its values alone.
func TestRedactURL(t *testing.T) {
	u, err := url.Parse("http://me:pw-secret@gw.example:8080/v1?api-key=k3y%2Fsecret&tenant=acme-77&bare-token-123&x=")
	if err != nil {
		t.Fatal(err)
	}
	want := "http://gw.example:8080/v1?api-key=REDACTED&tenant=REDACTED&REDACTED&x=REDACTED"
	if got := RedactURL(u); got != want {
		t.Fatalf("RedactURL = %q, want %q", got, want)
	}
	text := `Post "` + u.String() + `": dial tcp: refused; key k3y/secret, tenant acme-77, user me, pw pw-secret`
	got := RedactURLIn(text, u)
	for _, s := range []string{"k3y", "acme-77", "pw-secret", "bare-token-123"} {
		if strings.Contains(got, s) {
			t.Errorf("RedactURLIn left %q: %s", s, got)
		}
	}
	if !strings.Contains(got, "api-key=REDACTED") {
		t.Errorf("RedactURLIn: %s", got)
	}
}

// TestUpstreamPlaceholders: a {name} in an upstream's host parses, stays in
// Host as written and is shown as written; a placeholder elsewhere than in
// the host is not one.
func TestUpstreamPlaceholders(t *testing.T) {
	u, err := ParseUpstream("", "https://{location}-aiplatform.googleapis.com/")
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "{location}-aiplatform.googleapis.com" || u.Scheme != "https" || u.Path != "" {
		t.Fatalf("parsed %#v", u)
	}
	if got := RedactURL(u); got != "https://{location}-aiplatform.googleapis.com" {
		t.Fatalf("RedactURL = %q", got)
	}
	// What url.URL.String writes (braces escaped) parses back the same.
	if again, err := ParseUpstream(u.String(), ""); err != nil || again.Host != u.Host {
		t.Fatalf("round trip of %s: %v %v", u, again, err)
	}
	u, err = ParseUpstream("https://bedrock-runtime.{region}.amazonaws.com/x?k=v", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := RedactURL(u); got != "https://bedrock-runtime.{region}.amazonaws.com/x?k="+Redacted {
		t.Fatalf("RedactURL = %q", got)
	}
	if _, err := ParseUpstream("https://user:pw@{location}-x.example", ""); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("credentials with a placeholder: %v", err)
	}
	u, err = ParseUpstream("https://example.com/{location}", "")
	if err != nil || u.Host != "example.com" || u.Path != "/{location}" {
		t.Fatalf("placeholder in the path: %v %#v", err, u)
	}
}
