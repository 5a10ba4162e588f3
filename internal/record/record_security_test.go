package record_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/verify"
)

// countingServer is an upstream that must never be contacted.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "evil", http.StatusTeapot)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// raw writes req verbatim to addr and returns the answer's status (0 when
// the connection closed without one).
func raw(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// No request can choose the upstream: absolute-form targets and CONNECT are
// refused, and Host, X-Forwarded-*, Forwarded and a "//host" path never
// change where a call goes (DESIGN §10). Raw bytes, no client library.
func TestRequestNeverChoosesUpstream(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	evil, evilHits := countingServer(t)
	evilHost := strings.TrimPrefix(evil.URL, "http://") // a loopback address: the Host check cannot refuse it
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	addr := strings.TrimPrefix(p.srv.URL, "http://")
	body := `{"model":"gpt-4o-mini","temperature":0,"seed":1,"max_tokens":8,"messages":[{"role":"user","content":"where do I go"}]}`
	post := func(target, extra string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer k\r\nX-Traceforge-Source: a.go:1:f\r\n%sContent-Length: %d\r\nConnection: close\r\n\r\n%s", target, extra, len(body), body)
	}
	refused := []struct {
		name, req string
		status    int
	}{
		{"absolute form", post("http://"+evilHost+"/v1/chat/completions", ""), 400},
		{"absolute form https", post("https://"+evilHost+"/v1/chat/completions", ""), 400},
		{"connect", "CONNECT " + evilHost + " HTTP/1.1\r\nHost: " + evilHost + "\r\n\r\n", 405},
		{"host header", strings.Replace(post("/v1/chat/completions", ""), "Host: 127.0.0.1", "Host: evil.example", 1), 403},
	}
	for _, tc := range refused {
		if got := raw(t, addr, tc.req); got != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.status)
		}
	}
	if fake.Requests() != 0 {
		t.Errorf("a refused request reached the upstream")
	}
	// Accepted requests go to the configured upstream whatever they say.
	forwarded := []string{
		post("/v1/chat/completions", "X-Forwarded-Host: "+evilHost+"\r\nX-Forwarded-Proto: https\r\nForwarded: host="+evilHost+"\r\nX-Forwarded-For: 6.6.6.6\r\n"),
		post("//"+evilHost+"/v1/chat/completions", ""),
		post("/v1/chat/completions?url=http://"+evilHost+"/", ""),
	}
	for i, req := range forwarded {
		before := fake.Requests()
		raw(t, addr, req)
		if fake.Requests() != before+1 {
			t.Errorf("request %d did not reach the configured upstream", i)
		}
		last := fake.LastRequest()
		for _, h := range []string{"X-Forwarded-Host", "Forwarded", "X-Forwarded-Proto", "X-Forwarded-For"} {
			if v := last.Header.Get(h); v != "" {
				t.Errorf("request %d: %s: %q forwarded", i, h, v)
			}
		}
	}
	if evilHits.Load() != 0 {
		t.Errorf("the other server got %d requests", evilHits.Load())
	}
}

// upgrader answers 101 to any Upgrade request and then echoes raw bytes: the
// upstream a smuggling attempt would need.
func upgrader(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var upgrades atomic.Int64
	fake := fakeupstream.NewHandler(fakeupstream.Options{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			upgrades.Add(1)
			c, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", r.Header.Get("Upgrade"))
			_ = brw.Flush()
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &upgrades
}

// Hop-by-hop tricks. Expected behaviour:
//   - Upgrade (h2c, websocket) is never forwarded: traceforge is not a
//     tunnel, so the call is answered as plain HTTP/1.1 and recorded, and
//     the connection can never turn into an unrecorded pipe to the upstream.
//   - A header the client names in Connection is dropped, as RFC 9110
//     §7.6.1 says, even Authorization: the upstream then refuses the call,
//     and that refusal reaches the application; the key is never stored.
func TestHopByHopTricks(t *testing.T) {
	up, upgrades := upgrader(t)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, &fakeupstream.Server{URL: up.URL}, nil)
	for _, h := range []map[string]string{
		{"Connection": "Upgrade, HTTP2-Settings", "Upgrade": "h2c", "HTTP2-Settings": "AAMAAABkAARAAAAAAAIAAAAA"},
		{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"},
	} {
		r := p.do("/v1/chat/completions", openaiChat("Upgrade me "+h["Upgrade"]), h)
		if r.status != 200 {
			t.Errorf("Upgrade %s: status %d %s", h["Upgrade"], r.status, r.body)
		}
	}
	if upgrades.Load() != 0 {
		t.Errorf("an Upgrade header reached the upstream %d time(s)", upgrades.Load())
	}
	// Connection: Authorization drops the key before it leaves (RFC 9110).
	r := p.do("/v1/chat/completions", openaiChat("Drop my key"), map[string]string{"Connection": "Authorization, x-api-key"})
	if r.status != http.StatusUnauthorized {
		t.Errorf("Connection: Authorization: status %d, want the upstream's 401", r.status)
	}
	s := p.finish()
	if s.Recorded != 2 || !hasKind(s, record.KindUpstreamError) {
		t.Errorf("want the two upgrade calls recorded and the key-less call listed:\n%s", summaryText(s))
	}
	noKeyOnDisk(t, dir)
	if strings.Contains(p.log.String(), "T3BlbkFJ") || strings.Contains(summaryText(s), "T3BlbkFJ") {
		t.Error("the key reached the log or the summary")
	}
}

// gzipOf returns a gzip stream of n MiB of zeros: one compressed MiB
// repeated as gzip members (a valid multi-member stream), cheap to build.
func gzipOf(t *testing.T, mib int) []byte {
	t.Helper()
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	return bytes.Repeat(one.Bytes(), mib)
}

func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Compression bombs in both directions. A gzip request body is never
// inflated by traceforge: it cannot be keyed, so it is forwarded unchanged,
// listed, and not snapshotted. A gzip answer that inflates beyond the 64 MiB
// snapshot cap is refused after at most the cap was decoded.
func TestCompressionBombs(t *testing.T) {
	const inflated = 96 << 20 // beyond the 64 MiB snapshot cap
	bomb := gzipOf(t, inflated>>20)
	t.Run("request", func(t *testing.T) {
		fake := startFake(t, fakeupstream.Options{})
		dir := filepath.Join(t.TempDir(), ".ai-snapshots")
		p := newProxy(t, dir, fake, nil)
		var r reply
		alloc := allocDuring(func() {
			r = p.do("/v1/chat/completions", bomb, map[string]string{"Content-Encoding": "gzip"})
		})
		if r.status != http.StatusBadRequest { // the fake cannot read it either
			t.Errorf("status %d", r.status)
		}
		if alloc > 64<<20 && !raceOn {
			t.Errorf("a %d KiB gzip request allocated %d MiB in the proxy", len(bomb)>>10, alloc>>20)
		}
		if got := fake.LastRequest().Body; !bytes.Equal(got, bomb) {
			t.Errorf("the body was not forwarded unchanged (%d bytes)", len(got))
		}
		s := p.finish()
		if !hasKind(s, record.KindBadRequest) || len(snapshots(t, dir)) != 0 {
			t.Errorf("want the call listed and not snapshotted:\n%s", summaryText(s))
		}
	})
	// The application gets the answer streamed (inflated by the proxy's
	// transport when it did not ask for gzip itself); either way the proxy
	// keeps at most the snapshot cap of it.
	for _, ae := range []string{"", "gzip"} {
		t.Run("response accept-encoding="+ae, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(bomb)
			}))
			defer up.Close()
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := newProxy(t, dir, &fakeupstream.Server{URL: up.URL}, nil)
			data, _ := json.Marshal(openaiChat("Bomb"))
			var status int
			var got int64
			alloc := allocDuring(func() {
				req, _ := http.NewRequest(http.MethodPost, p.srv.URL+"/v1/chat/completions", bytes.NewReader(data))
				req.Header.Set("Authorization", "Bearer "+testKey)
				req.Header.Set("X-Traceforge-Source", srcHeader)
				if ae != "" {
					req.Header.Set("Accept-Encoding", ae)
				}
				tr := &http.Transport{DisableCompression: true}
				defer tr.CloseIdleConnections()
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				status = resp.StatusCode
				got, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
			want := int64(inflated)
			if ae != "" {
				want = int64(len(bomb))
			}
			if status != 200 || got != want {
				t.Errorf("the application got %d, %d bytes, want %d", status, got, want)
			}
			// The cap (64 MiB) plus buffer growth, never all of it inflated.
			if alloc > 200<<20 && !raceOn {
				t.Errorf("a gzip bomb answer allocated %d MiB", alloc>>20)
			}
			s := p.finish()
			if !hasKind(s, record.KindRefused) || len(snapshots(t, dir)) != 0 {
				t.Errorf("want the bomb refused:\n%s", summaryText(s))
			}
		})
	}
}

// A slow stream (longer than every server timeout) goes through the real
// server setup and is recorded.
func TestSlowStreamThroughProxy(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{ChunkDelay: 120 * time.Millisecond})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	rec, err := record.New(record.Config{Dir: dir, Upstreams: map[provider.Name]string{provider.OpenAI: fake.URL + "/v1", provider.Anthropic: fake.URL}, ManifestInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ln, _, err := serve.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	start := time.Now()
	r, err := send("http://"+ln.Addr().String()+"/v1/chat/completions", streamed(openaiChat("one two three four five six seven eight nine ten")), nil)
	if err != nil || r.status != 200 {
		t.Fatalf("stream: %v %d", err, r.status)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("the stream took only %v; the test needs a slow one", d)
	}
	srv.Close()
	if s := rec.Finish(); s.Recorded != 1 {
		t.Errorf("slow stream not recorded:\n%s", summaryText(s))
	}
}

// Synthetic credentials for the secret tests. Only the first two match a
// key pattern; the others prove that header and query values never reach
// disk or output at all, pattern or not.
var (
	anthropicKey = "sk-ant-api03-" + strings.Repeat("Z", 93) + "AA"
	azureKey     = "SYNTHAZUREKEY0123456789abcdef"
	orgID        = "org-SYNTHORGANIZATION"
	cookie       = "session=SYNTHCOOKIEVALUE"
	queryKey     = "SYNTHQUERYKEY42"
	secretMarks  = []string{"T3BlbkFJ", "sk-ant-api03", "SYNTHAZUREKEY", "SYNTHORGANIZATION", "SYNTHCOOKIEVALUE", "SYNTHQUERYKEY"}
)

func secretHeaders() map[string]string {
	return map[string]string{
		"Authorization":       "Bearer " + testKey,
		"x-api-key":           anthropicKey,
		"api-key":             azureKey,
		"OpenAI-Organization": orgID,
		"Cookie":              cookie,
	}
}

// leaks returns where a secret marker appears.
func leaks(texts map[string]string) []string {
	var out []string
	for where, s := range texts {
		for _, m := range secretMarks {
			if strings.Contains(s, m) {
				out = append(out, where+" holds "+m)
			}
		}
	}
	return out
}

// echoUpstream answers every call 401 with a body that quotes every
// credential it received, as a careless gateway would.
func echoUpstream(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var got []string
		for _, h := range []string{"api-key", "OpenAI-Organization", "Cookie", "x-api-key", "Authorization"} {
			got = append(got, r.Header.Get(h))
		}
		msg := fmt.Sprintf("Incorrect API key provided (query %s): %s", r.URL.RawQuery, strings.Join(got, " "))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","code":"invalid_api_key"}}`, msg)
	}))
	t.Cleanup(s.Close)
	return s
}

// No secret reaches the snapshot folder (temp files included), the log, the
// summary or a verify report in any format — from headers, query strings,
// request bodies (refused, with a pointer) or upstream error bodies — and
// replay works with a different key or none (DESIGN §10).
func TestSecretsNeverWritten(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	hdr := secretHeaders()
	good := []struct {
		path string
		body map[string]any
	}{
		{"/v1/chat/completions?api-key=" + queryKey, openaiChat("Keep my secrets")},
		{"/v1/chat/completions?api-key=" + queryKey, streamed(openaiChat("Keep my secrets streamed"))},
		{"/v1/messages?key=" + queryKey, anthropicMsg("Keep my secrets too")},
	}
	for _, g := range good {
		if r := p.do(g.path, g.body, hdr); r.status != 200 {
			t.Fatalf("%s: %d %s", g.path, r.status, r.body)
		}
	}
	// A key inside the request body: refused, never written, the pointer named.
	inBody := openaiChat("My key is " + testKey + " and " + anthropicKey)
	if r := p.do("/v1/chat/completions", inBody, hdr); r.status != 200 {
		t.Fatalf("body key call: %d", r.status)
	}
	s := p.finish()
	if s.Recorded != 3 || !hasKind(s, record.KindRefused) {
		t.Fatalf("want 3 recorded and the body key refused:\n%s", summaryText(s))
	}
	refusal := ""
	for _, pr := range s.Problems {
		if pr.Rule == string(record.KindRefused) {
			refusal = pr.Message + " " + strings.Join(pr.Details, " ")
		}
	}
	if !strings.Contains(refusal, "/snapshots/0/request/messages/1/content") || !strings.Contains(refusal, "[secret]") {
		t.Errorf("the refusal does not name the pointer and rule: %s", refusal)
	}

	// Error bodies quoting the credentials, and an unreachable upstream
	// whose URL carries the query key.
	echo := echoUpstream(t)
	dir2 := filepath.Join(t.TempDir(), ".ai-snapshots")
	p2 := newProxy(t, dir2, &fakeupstream.Server{URL: echo.URL}, nil)
	p2.do("/v1/chat/completions?api-key="+queryKey, openaiChat("Echo my key"), hdr)
	p2.do("/v1/messages?key="+queryKey, anthropicMsg("Echo my key"), hdr)
	s2 := p2.finish()
	dir3 := filepath.Join(t.TempDir(), ".ai-snapshots")
	p3 := newProxy(t, dir3, &fakeupstream.Server{URL: "http://127.0.0.1:1"}, nil)
	p3.do("/v1/chat/completions?api-key="+queryKey, openaiChat("Nobody there"), hdr)
	s3 := p3.finish()
	if !hasKind(s2, record.KindUpstreamError) || !hasKind(s3, record.KindUnreachable) {
		t.Fatalf("want listed failures:\n%s\n%s", summaryText(s2), summaryText(s3))
	}

	// Replay the set with another key and with none, and write every report.
	set := verifySet(t, dir)
	rs := verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, verify.Refuse))
	for i, h := range []map[string]string{
		{"Authorization": "Bearer traceforge-replay", "x-api-key": "other"},
		{"Authorization": "", "x-api-key": ""},
	} {
		for _, g := range good {
			r, err := send(srv.URL+g.path, g.body, h)
			if err != nil || r.status != 200 {
				t.Errorf("replay %d %s: %v %d %s", i, g.path, err, r.status, r.body)
			}
		}
	}
	// A miss carrying the keys, so that the report shows a request diff.
	_, _ = send(srv.URL+"/v1/chat/completions?api-key="+queryKey, inBody, hdr)
	srv.Close()
	rep, _, err := verify.Static(verify.StaticOptions{Dir: dir, Display: ".ai-snapshots"})
	if err != nil {
		t.Fatal(err)
	}
	rep.Replayed = rs.Finish()
	texts := map[string]string{"log": p.log.String() + p2.log.String() + p3.log.String(),
		"summary": summaryText(s) + summaryText(s2) + summaryText(s3)}
	for _, format := range []string{"text", "json", "junit", "github"} {
		var b bytes.Buffer
		if err := render.Verify(&b, rep, format, false); err != nil {
			t.Fatal(err)
		}
		texts["report "+format] = b.String()
	}
	if !strings.Contains(texts["report text"], "REDACTED") {
		t.Errorf("the miss report shows no redaction:\n%s", texts["report text"])
	}
	for _, d := range []string{dir, dir2, dir3} {
		for rel, b := range files(t, d) {
			texts[d+"/"+rel] = string(b)
		}
	}
	for _, l := range leaks(texts) {
		t.Error(l)
	}
}

// 64 parallel clients, each request sent by 8 of them at once and 8
// different requests: every key is forwarded each time, written once, and
// the set verifies (run under -race by make test).
func TestConcurrentIdenticalRequests(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.ManifestInterval = 5 * time.Millisecond })
	const clients, distinct = 64, 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	ids := make([]string, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			path, body := "/v1/chat/completions", openaiChat(fmt.Sprintf("Same question %d", i%distinct))
			if i%distinct >= distinct/2 {
				path, body = "/v1/messages", streamed(anthropicMsg(fmt.Sprintf("Same question %d", i%distinct)))
			}
			r, err := send(p.srv.URL+path, body, nil)
			if err != nil || r.status != 200 {
				t.Errorf("client %d: %v %d", i, err, r.status)
				return
			}
			ids[i] = r.header.Get(provider.HeaderSnapshotID)
		}(i)
	}
	close(start)
	wg.Wait()
	s := p.finish()
	if s.Failed() || s.Recorded != distinct || s.Recorded+s.Unchanged != clients {
		t.Fatalf("want %d recorded, %d unchanged:\n%s", distinct, clients-distinct, summaryText(s))
	}
	for i := range ids {
		if ids[i] != ids[i%distinct] {
			t.Errorf("client %d got id %s, client %d got %s for the same request", i, ids[i], i%distinct, ids[i%distinct])
		}
	}
	if n := len(snapshots(t, dir)); n != distinct {
		t.Errorf("%d files, want %d", n, distinct)
	}
	if set := verifySet(t, dir); len(set.Manifest.Entries) != distinct {
		t.Errorf("manifest lists %d entries", len(set.Manifest.Entries))
	}
	for rel := range files(t, dir) {
		if strings.Contains(rel, ".tmp-") {
			t.Errorf("temp file left: %s", rel)
		}
	}
}

// Duplicate keys in a request body make it unkeyable (forwarded, listed,
// not snapshotted); case-variant keys are distinct JSON keys and are kept
// in the snapshot as sent.
func TestDuplicateAndCaseVariantRequestKeys(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	dup := []byte(`{"model":"gpt-4o-mini","model":"gpt-4o","temperature":0,"seed":1,"max_tokens":8,"messages":[{"role":"user","content":"dup"}]}`)
	if r := p.do("/v1/chat/completions", dup, nil); r.status != 200 {
		t.Errorf("duplicate keys: status %d", r.status)
	}
	cv := openaiChat("Case variants")
	cv["Model"] = "gpt-4o"
	if r := p.do("/v1/chat/completions", cv, nil); r.status != 200 {
		t.Errorf("case variant: status %d", r.status)
	}
	s := p.finish()
	if !hasKind(s, record.KindBadRequest) || s.Recorded != 1 {
		t.Fatalf("want the duplicate listed and the case variant recorded:\n%s", summaryText(s))
	}
	for _, b := range snapshots(t, dir) {
		req := readRecord(t, b)["request"].(map[string]any)
		if req["Model"] != "gpt-4o" || req["model"] != "gpt-4o-mini" {
			t.Errorf("case-variant keys not kept apart: %v", req)
		}
	}
	verifySet(t, dir)
}
