package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestH2CPriorKnowledge: the servers speak HTTP/2 with prior knowledge over
// plain TCP (the AWS JavaScript SDK's default) through the Guard, and
// HTTP/1.1 as before; an HTTP/1.1 Upgrade to h2c is never switched to.
func TestH2CPriorKnowledge(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, r.Proto+" "+r.Method+" "+r.URL.EscapedPath()+" "+string(body))
	}), nil, func(w http.ResponseWriter, _ *http.Request, status int, msg string) { http.Error(w, msg, status) })
	run := Start(ln, h)
	defer run.Stop(time.Second)
	base := "http://" + ln.Addr().String()

	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: &http.Transport{Protocols: &p}}
	resp, err := h2c.Post(base+"/model/m%3A0/converse", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || string(b) != `HTTP/2.0 POST /model/m%3A0/converse {"a":1}` {
		t.Fatalf("h2c: %s %q", resp.Proto, b)
	}

	resp, err = http.Get(base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 1 || string(b) != "HTTP/1.1 GET /x " {
		t.Fatalf("HTTP/1.1: %s %q", resp.Proto, b)
	}

	// An Upgrade: h2c request is answered in HTTP/1.1, never 101.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	up, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(up.Body)
	if up.StatusCode == http.StatusSwitchingProtocols || up.ProtoMajor != 1 || string(b) != "HTTP/1.1 GET /up " {
		t.Fatalf("Upgrade: %d %s %q", up.StatusCode, up.Proto, b)
	}

	// The Guard applies to HTTP/2 requests too: a foreign Host is refused.
	req, _ := http.NewRequest("GET", base+"/x", nil)
	req.Host = "evil.example"
	resp, err = h2c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("h2c foreign Host: %d", resp.StatusCode)
	}
}
