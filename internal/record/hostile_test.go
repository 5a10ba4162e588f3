package record_test

// Regression tests for the defects a hostile upstream and client found
// (issue 19, DESIGN §12.10).

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"github.com/traceforge/traceforge/internal/serve"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// scripted is an OpenAI-compatible upstream that answers every chat call
// with plain (JSON) or, when the request streams, with stream (SSE).
func scripted(t *testing.T, plain, stream string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal(b, &req)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, plain)
	}))
	t.Cleanup(s.Close)
	return s
}

// scriptedProxy is a proxy whose OpenAI upstream is up.
func scriptedProxy(t *testing.T, dir string, up *httptest.Server) *proxy {
	t.Helper()
	fake := startFake(t, fakeupstream.Options{})
	return newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.OpenAI] = up.URL + "/v1" })
}

const vendorPlain = `{"id":"chatcmpl-v","object":"chat.completion","created":1767954600,"model":"deepseek-r1",
"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"Paris.",
"reasoning_content":"The user asks for the capital of France. It is Paris.","vendor_meta":{"route":"b","tries":2}}}],
"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}}`

const vendorStream = `data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":"The user asks "},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"reasoning_content":"for the capital of France. It is Paris.","vendor_meta":{"route":"a"}},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[{"index":0,"delta":{"content":"Paris.","reasoning_content":null,"vendor_meta":{"route":"b","tries":2}},"logprobs":null,"finish_reason":"stop"}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1767954600,"model":"deepseek-r1","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}}

data: [DONE]

`

func firstMessage(t *testing.T, body map[string]any) string {
	t.Helper()
	choices, _ := body["choices"].([]any)
	if len(choices) == 0 {
		t.Fatalf("no choices in %v", body)
	}
	msg := choices[0].(map[string]any)["message"]
	b, err := snapshot.Canonical(msg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVendorMembersSurviveRecordAndReplay (§12.10.2): an upstream that
// sends reasoning_content and a non-string vendor member, recorded plain
// and streamed, gives the same stored message; both snapshots replay it
// plain and streamed.
func TestVendorMembersSurviveRecordAndReplay(t *testing.T) {
	up := scripted(t, vendorPlain, vendorStream)
	want := ""
	for _, stream := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), ".ai-snapshots")
		p := scriptedProxy(t, dir, up)
		body := openaiChat("Capital of France?")
		if stream {
			body = streamed(body)
		}
		r := p.do("/v1/chat/completions", body, nil)
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		if s := p.finish(); s.Failed() {
			t.Fatalf("run failed:\n%s", summaryText(s))
		}
		set := verifySet(t, dir)
		if len(set.Snapshots) != 1 {
			t.Fatalf("%d snapshots", len(set.Snapshots))
		}
		s := set.Snapshots[0]
		stored := firstMessage(t, s.Record.Response.Body)
		if !strings.Contains(stored, `"reasoning_content":"The user asks for the capital of France. It is Paris."`) ||
			!strings.Contains(stored, `"vendor_meta":{"route":"b","tries":2}`) {
			t.Fatalf("stream=%v: stored message lacks a member: %s", stream, stored)
		}
		if want == "" {
			want = stored
		} else if stored != want {
			t.Fatalf("streamed snapshot's message\n%s\ndiffers from the plain one\n%s", stored, want)
		}
		// Replay this snapshot both ways.
		for _, replayStream := range []bool{false, true} {
			rb := openaiChat("Capital of France?")
			if replayStream {
				rb = streamed(rb)
			}
			raw, _ := json.Marshal(rb)
			req, err := registry.Parse(http.MethodPost, "/v1/chat/completions", http.Header{}, raw)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			if _, err := replay.NewEntries("").Respond(context.Background(), rec, req, s, replay.Options{}); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if replayStream {
				a := req.Format.NewAssembler()
				_, _ = a.Write(rec.Body.Bytes())
				if got, err = a.Done(); err != nil {
					t.Fatal(err)
				}
			} else if got, err = provider.Decode(bytes.TrimSpace(rec.Body.Bytes())); err != nil {
				t.Fatal(err)
			}
			if m := firstMessage(t, got); m != want {
				t.Errorf("recorded stream=%v, replayed stream=%v: message\n%s\nwant\n%s", stream, replayStream, m, want)
			}
		}
	}
}

// TestInconsistentToolStreamNotSnapshotted (§12.10.3): a stream whose tool
// call changes its id and name on one index is passed to the application
// but not snapshotted, with the reason, and the run fails (record exits 1).
func TestInconsistentToolStreamNotSnapshotted(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	stream := chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "null") +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]}`, "null") +
		chunk(`{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]}`, "null") +
		chunk(`{}`, `"tool_calls"`) +
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n\ndata: [DONE]\n\n"
	up := scripted(t, vendorPlain, stream)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := scriptedProxy(t, dir, up)
	r := p.do("/v1/chat/completions", streamed(withTools("openai", openaiChat("Weather?"))), nil)
	if r.status != 200 || !strings.Contains(string(r.body), "call_b") {
		t.Fatalf("the application did not get the stream: %d %s", r.status, r.body)
	}
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindBadResponse) {
		t.Fatalf("run not failed with bad-response:\n%s", summaryText(s))
	}
	text := summaryText(s)
	for _, want := range []string{"not snapshotted", `changes its id from "call_a" to "call_b"`, "refused, not guessed"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if n := len(snapshots(t, dir)); n != 0 {
		t.Fatalf("%d snapshots written", n)
	}
}

// gatewaySecret is a key a gateway takes in its URL's query.
const gatewaySecret = "gw-secret-4f9a2c71e0"

// TestUpstreamURLCredentialsNeverShown (§12.10.4): an upstream URL with a
// key in its query (and the failed call's URL in the transport's error)
// never appears in the 502 body sent to the application, the summary or
// the log; the query's names stay, their values read REDACTED.
func TestUpstreamURLCredentialsNeverShown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connection refused from now on
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	fake := startFake(t, fakeupstream.Options{})
	p := newProxy(t, dir, fake, func(c *record.Config) {
		c.Upstreams[provider.OpenAI] = deadURL + "/v1?api-key=" + gatewaySecret + "&tenant=acme-tenant-77"
	})
	r := p.do("/v1/chat/completions", openaiChat("Hello?"), nil)
	if r.status != http.StatusBadGateway {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	oa := serve.RedactURL(p.rec.Upstream(provider.OpenAI))
	s := p.finish()
	channels := map[string]string{"502 body": string(r.body), "summary": summaryText(s), "log": p.log.String(), "Upstreams": oa}
	for name, text := range channels {
		for _, secret := range []string{gatewaySecret, "acme-tenant-77"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %q: %s", name, secret, text)
			}
		}
	}
	if !strings.Contains(string(r.body), "/v1?api-key=REDACTED&tenant=REDACTED") || !strings.Contains(oa, "api-key=REDACTED") {
		t.Errorf("the redacted URL is not shown: %s / %s", r.body, oa)
	}
}

// TestOneKeyManySourcesNeverRewritten (§12.10.6, §11 "Source"): 32 calls
// with one key from 32 places keep the smallest source; recording them
// again, in another order, leaves the file alone — same inode, same bytes,
// no "source updated" — and a genuine move is written once.
func TestOneKeyManySourcesNeverRewritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	fake := startFake(t, fakeupstream.Options{})
	src := func(line int) map[string]string {
		return map[string]string{"X-Traceforge-Source": "app/agent.go:" + strconv.Itoa(line) + ":Ask"}
	}
	run := func(lines ...int) (*result.RecordSummary, string) {
		p := newProxy(t, dir, fake, nil)
		id := ""
		for _, l := range lines {
			r := p.do("/v1/chat/completions", openaiChat("Same question everywhere"), src(l))
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			id = r.header.Get(provider.HeaderSnapshotID)
		}
		s := p.finish()
		if s.Failed() {
			t.Fatalf("run failed:\n%s", summaryText(s))
		}
		return s, filepath.Join(dir, "openai", id+".json")
	}
	var up, down, moved []int
	for l := 1; l <= 32; l++ {
		up = append(up, 10+l)
		down = append(down, 43-l)
	}
	for l := 40; l >= 38; l-- {
		moved = append(moved, l)
	}
	_, file := run(down...)
	if rec := readRecord(t, mustRead(t, file)); rec["source"].(map[string]any)["line"] != json.Number("11") {
		t.Fatalf("first run stored source %v, want the smallest (line 11)", rec["source"])
	}
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	beforeBytes := mustRead(t, file)
	for _, order := range [][]int{down, up} {
		s, _ := run(order...)
		after, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) || !bytes.Equal(beforeBytes, mustRead(t, file)) {
			t.Fatalf("the unchanged snapshot was rewritten")
		}
		if s.SourceUpdated != 0 || s.Unchanged != 32 {
			t.Fatalf("summary: %d source updated, %d unchanged; want 0 and 32\n%s", s.SourceUpdated, s.Unchanged, summaryText(s))
		}
	}
	s, _ := run(moved...)
	if s.SourceUpdated != 1 || s.Unchanged != 2 {
		t.Fatalf("moved call: %d source updated, %d unchanged; want 1 and 2", s.SourceUpdated, s.Unchanged)
	}
	if rec := readRecord(t, mustRead(t, file)); rec["source"].(map[string]any)["line"] != json.Number("38") {
		t.Fatalf("moved call stored source %v, want line 38", rec["source"])
	}
	verifySet(t, dir)
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClientHangUpIsTheClients (§12.10.6): an application that hangs up
// in the middle of a stream is reported as the client's doing, not as an
// upstream that broke off.
func TestClientHangUpIsTheClients(t *testing.T) {
	first := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Once"},"finish_reason":null}]}` + "\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes while anyone listens
	}))
	t.Cleanup(up.Close)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := scriptedProxy(t, dir, up)
	raw, _ := json.Marshal(streamed(openaiChat("Tell me a long story")))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.srv.URL+"/v1/chat/completions", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Traceforge-Source", srcHeader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("data: "))
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	cancel() // the application hangs up
	resp.Body.Close()
	s := p.finish()
	if !hasKind(s, record.KindClientClosed) || hasKind(s, record.KindBroken) {
		t.Fatalf("kinds %v, want client-closed only:\n%s", problemKinds(s), summaryText(s))
	}
	if text := summaryText(s); strings.Contains(text, "upstream answer broke off") {
		t.Fatalf("blamed on the upstream:\n%s", text)
	}
	// The call is named by the line that made it (issue 30 item 4).
	if text := summaryText(s); !strings.Contains(text, "POST /v1/chat/completions from app/agent.go:42:Ask") {
		t.Fatalf("the hang-up does not name its source:\n%s", text)
	}
}

// TestUnkeyableCallsNameTheirSource (§12.10.6): a call whose body cannot
// be keyed, or whose path no format covers, is listed with the source it
// carried, so the user can find the line that made it.
func TestUnkeyableCallsNameTheirSource(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, startFake(t, fakeupstream.Options{}), nil)
	p.do("/v1/chat/completions", []byte(`{"model": "gpt-4o-mini", "messages": [`), map[string]string{"X-Traceforge-Source": "app/broken.go:7:Send"})
	p.do("/v1/moderations", map[string]any{"model": "omni-moderation-latest", "input": "x"}, map[string]string{"X-Traceforge-Source": "app/moderate.go:9:Moderate"})
	s := p.finish()
	if !hasKind(s, record.KindBadRequest) || !hasKind(s, record.KindUnknownPath) {
		t.Fatalf("kinds %v", problemKinds(s))
	}
	text := summaryText(s)
	for _, want := range []string{"POST /v1/chat/completions from app/broken.go:7:Send", "POST /v1/moderations from app/moderate.go:9:Moderate"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}

// bigStream is an OpenAI chat stream carrying a size-byte answer in 4-byte
// pieces, each in a full chunk: about 45 bytes of SSE per byte of answer,
// the ratio of a 5.4 MB answer sent as 198 MB.
func bigStream(size int) string {
	var b strings.Builder
	piece := "abc "
	head := `data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1767954600,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"`
	for n := 0; n < size; n += len(piece) {
		b.WriteString(head + piece + `"},"logprobs":null,"finish_reason":null}],"obfuscation":"Xq3v9LbT2"}` + "\n\n")
	}
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1767954600,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1767954600,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":900,"total_tokens":905}}` + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// TestCapAppliesToTheSnapshot (§12.10.6, §13.4): with the snapshot cap
// lowered to 256 KiB (standing for 64 MiB), a stream whose events fit
// records fine — plain and gzip-compressed — while one whose events do not
// is refused by the cap even though its assembled answer is small: since
// format 1.2.0 the snapshot holds the stream's events (response.wire).
func TestCapAppliesToTheSnapshot(t *testing.T) {
	const limit = 256 << 10
	t.Cleanup(record.SetMaxSnapshot(limit))
	for _, c := range []struct {
		name   string
		size   int
		gzip   bool
		stored bool
	}{
		{"fits", 2 << 10, false, true},
		{"fits-gzip", 2 << 10, true, true},
		{"too-large", 8 << 10, false, false},
		{"too-large-gzip", 8 << 10, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			stream := bigStream(c.size)
			if fits := len(stream) < limit; fits != c.stored || c.size > limit/16 {
				t.Fatalf("the stream is %d bytes for a %d-byte answer: not the case this test is about", len(stream), c.size)
			}
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				if !c.gzip {
					_, _ = io.WriteString(w, stream)
					return
				}
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				_, _ = io.WriteString(zw, stream)
				_ = zw.Close()
			}))
			t.Cleanup(up.Close)
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := scriptedProxy(t, dir, up)
			body := streamed(openaiChat("Write a lot"))
			body["stream_options"] = map[string]any{"include_usage": true}
			hdr := map[string]string{}
			if c.gzip {
				hdr["Accept-Encoding"] = "gzip"
			}
			r := p.do("/v1/chat/completions", body, hdr)
			if r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			s := p.finish()
			if got := len(snapshots(t, dir)) == 1; got != c.stored {
				t.Fatalf("stored = %v, want %v:\n%s", got, c.stored, summaryText(s))
			}
			if c.stored {
				verifySet(t, dir)
				return
			}
			if !hasKind(s, record.KindRefused) || !strings.Contains(summaryText(s), "snapshot limit") {
				t.Fatalf("not refused by the cap:\n%s", summaryText(s))
			}
		})
	}
}

// TestUnrequestedEncodingPassedThrough (§12.10.6): the proxy asks the
// upstream only for encodings it can decode; an upstream that answers a
// stream in br anyway used to leave the application with an empty reply
// (the usage stripper could not decode it). The answer now reaches the
// application byte for byte, and the call is listed, not snapshotted.
func TestUnrequestedEncodingPassedThrough(t *testing.T) {
	payload := []byte("\x1b\x02\x00\xf8 not really brotli, but no one here can tell")
	var asked []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(r.URL.Path, "chat") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Header().Set("Content-Encoding", "br")
		_, _ = w.Write(payload)
	}))
	t.Cleanup(up.Close)
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"stream, usage added by the proxy", streamed(openaiChat("Hello br"))},
		{"stream with usage", func() map[string]any {
			b := streamed(openaiChat("Hello br 2"))
			b["stream_options"] = map[string]any{"include_usage": true}
			return b
		}()},
		{"plain", openaiChat("Hello br 3")},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked = nil
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := scriptedProxy(t, dir, up)
			r := p.do("/v1/chat/completions", c.body, map[string]string{"Accept-Encoding": "gzip, deflate, br"})
			if r.status != 200 || !bytes.Equal(r.body, payload) || r.header.Get("Content-Encoding") != "br" {
				t.Fatalf("the application got %d %q (Content-Encoding %q), want the upstream's bytes", r.status, r.body, r.header.Get("Content-Encoding"))
			}
			if len(asked) != 1 || strings.Contains(asked[0], "br") {
				t.Fatalf("the proxy asked the upstream for %q", asked)
			}
			s := p.finish()
			if !s.Failed() || !hasKind(s, record.KindBadResponse) || !strings.Contains(summaryText(s), `Content-Encoding "br"`) {
				t.Fatalf("not listed:\n%s", summaryText(s))
			}
			if n := len(snapshots(t, dir)); n != 0 {
				t.Fatalf("%d snapshots", n)
			}
		})
	}
}
