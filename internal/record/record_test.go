package record_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

type callCase struct {
	name     string
	provider string
	path     string
	body     map[string]any
}

func allCalls() []callCase {
	return []callCase{
		{"openai-chat-plain", "openai", "/v1/chat/completions", openaiChat("Summarize snapshot testing")},
		{"openai-chat-stream", "openai", "/v1/chat/completions", streamed(openaiChat("Summarize stream testing"))},
		{"openai-chat-tool", "openai", "/v1/chat/completions", withTools("openai", openaiChat("What is the weather in Paris?"))},
		{"openai-chat-tool-stream", "openai", "/v1/chat/completions", streamed(withTools("openai", openaiChat("What is the weather in Rome?")))},
		{"openai-completions", "openai", "/v1/completions", openaiCompletion("Say hello")},
		{"openai-completions-stream", "openai", "/v1/completions", streamed(openaiCompletion("Say goodbye"))},
		{"anthropic-plain", "anthropic", "/v1/messages", anthropicMsg("Explain snapshot testing")},
		{"anthropic-stream", "anthropic", "/v1/messages", streamed(anthropicMsg("Explain stream testing"))},
		{"anthropic-tool", "anthropic", "/v1/messages", withTools("anthropic", anthropicMsg("What is the weather in Paris?"))},
		{"anthropic-tool-stream", "anthropic", "/v1/messages", streamed(withTools("anthropic", anthropicMsg("What is the weather in Oslo?")))},
	}
}

func TestRecordsEveryCallShape(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	for _, tc := range allCalls() {
		t.Run(tc.name, func(t *testing.T) {
			r := p.do(tc.path, tc.body, nil)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			id := r.header.Get(provider.HeaderSnapshotID)
			if !snapshot.ValidID(id) {
				t.Fatalf("X-Traceforge-Snapshot-Id = %q", id)
			}
			// The snapshot is on disk when the application gets its answer.
			data, err := os.ReadFile(filepath.Join(dir, tc.provider, id+".json"))
			if err != nil {
				t.Fatalf("snapshot not written: %v", err)
			}
			rec := readRecord(t, data)
			resp := rec["response"].(map[string]any)
			if tc.body["stream"] == true {
				if resp["stream"] != true {
					t.Errorf("response.stream = %v, want true", resp["stream"])
				}
				if !strings.Contains(r.header.Get("Content-Type"), "text/event-stream") {
					t.Errorf("content type %q", r.header.Get("Content-Type"))
				}
			} else if _, ok := resp["stream"]; ok {
				t.Errorf("response.stream present on a plain call")
			}
			if resp["tokens_used"].(json.Number) == "0" {
				t.Errorf("tokens_used is 0")
			}
			if tc.body["tools"] != nil {
				if resp["tool_calls"] == nil {
					t.Errorf("no tool_calls recorded: %v", resp)
				}
			} else if c, _ := resp["content"].(string); !strings.HasPrefix(c, "Echo:") {
				t.Errorf("content = %q", c)
			}
			src := rec["source"].(map[string]any)
			if src["file"] != "app/agent.go" || src["function"] != "Ask" {
				t.Errorf("source = %v", src)
			}
			if tc.provider == "anthropic" {
				if h, _ := rec["request_headers"].(map[string]any); h["anthropic-version"] != "2023-06-01" {
					t.Errorf("request_headers = %v", rec["request_headers"])
				}
			} else if _, ok := rec["request_headers"]; ok {
				t.Errorf("request_headers stored for openai: %v", rec["request_headers"])
			}
			// The source header never reaches the upstream; the key does.
			last := fake.LastRequest()
			if last.Header.Get("X-Traceforge-Source") != "" {
				t.Errorf("X-Traceforge-Source forwarded upstream")
			}
			if last.Header.Get("Authorization") != "Bearer "+testKey || last.Header.Get("x-api-key") != testKey {
				t.Errorf("API key not passed through untouched")
			}
		})
	}
	s := p.finish()
	if s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	if got, want := s.Recorded, len(allCalls()); got != want {
		t.Errorf("recorded %d, want %d", got, want)
	}
	if n := len(snapshots(t, dir)); n != len(allCalls()) {
		t.Errorf("%d snapshot files, want %d", n, len(allCalls()))
	}
	set := verifySet(t, dir)
	if set.Manifest == nil || len(set.Manifest.Entries) != len(allCalls()) {
		t.Errorf("manifest does not list every snapshot")
	}
	noKeyOnDisk(t, dir)
	if strings.Contains(p.log.String(), testKey) {
		t.Errorf("the log holds the API key")
	}
}

// A streamed OpenAI call without include_usage: the upstream is asked for
// usage, the application gets a stream without it, the snapshot has it.
func TestIncludeUsageAddedAndStripped(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	r := p.do("/v1/chat/completions", streamed(openaiChat("Count tokens please")), nil)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var sent map[string]any
	if err := json.Unmarshal(fake.LastRequest().Body, &sent); err != nil {
		t.Fatal(err)
	}
	if so, _ := sent["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Fatalf("upstream did not get include_usage: %s", fake.LastRequest().Body)
	}
	for _, d := range sseData(r.body) {
		if strings.Contains(d, `"usage"`) {
			t.Errorf("the application got usage it did not ask for: %s", d)
		}
	}
	if data := sseData(r.body); len(data) == 0 || data[len(data)-1] != "[DONE]" {
		t.Errorf("stream does not end with [DONE]: %q", data)
	}
	rec := readRecord(t, snapshots(t, dir)["openai/"+r.header.Get(provider.HeaderSnapshotID)+".json"])
	if _, ok := rec["request"].(map[string]any)["stream_options"]; ok {
		t.Errorf("stored request has the proxy's stream_options; it must be what the application sent")
	}
	if rec["response"].(map[string]any)["usage"] == nil {
		t.Errorf("snapshot has no usage")
	}
	// An application that asks for usage gets it.
	r2 := p.do("/v1/chat/completions", func() map[string]any {
		b := streamed(openaiChat("Count tokens again"))
		b["stream_options"] = map[string]any{"include_usage": true}
		return b
	}(), nil)
	if !bytes.Contains(r2.body, []byte(`"usage"`)) {
		t.Errorf("usage stripped from an application that asked for it")
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	verifySet(t, dir)
}

func TestIncludeUsageRejected(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{RejectIncludeUsage: true})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	r := p.do("/v1/chat/completions", streamed(openaiChat("No usage here")), nil)
	if r.status != 200 {
		t.Fatalf("the resent call should succeed, got %d: %s", r.status, r.body)
	}
	if fake.Requests() != 2 {
		t.Errorf("upstream got %d requests, want 2 (the rejected one and the resend)", fake.Requests())
	}
	if bytes.Contains(fake.LastRequest().Body, []byte("stream_options")) {
		t.Errorf("the resend still carries stream_options")
	}
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindUsageRejected) {
		t.Fatalf("want an include-usage-rejected problem, got %v", problemKinds(s))
	}
	if n := len(snapshots(t, dir)); n != 0 {
		t.Errorf("%d snapshots written, want 0", n)
	}
	verifySet(t, dir)
}

// The snapshot of a streamed call equals the snapshot of the same call made
// without streaming, except response.stream, latency, per-call ids and the
// stream's events as sent (response.wire, which only a stream has).
func TestStreamedEqualsPlain(t *testing.T) {
	cases := []callCase{
		{"openai-chat", "openai", "/v1/chat/completions", openaiChat("Equal please")},
		{"openai-chat-tool", "openai", "/v1/chat/completions", withTools("openai", openaiChat("Weather in Paris and Rome, both?"))},
		{"openai-completions", "openai", "/v1/completions", openaiCompletion("Equal completions")},
		{"anthropic", "anthropic", "/v1/messages", anthropicMsg("Equal messages")},
		{"anthropic-tool", "anthropic", "/v1/messages", withTools("anthropic", anthropicMsg("What is the weather in Paris?"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := startFake(t, fakeupstream.Options{})
			records := map[bool]map[string]any{}
			for _, stream := range []bool{false, true} {
				dir := filepath.Join(t.TempDir(), ".ai-snapshots")
				clk := newClock()
				p := newProxy(t, dir, fake, func(c *record.Config) { c.Now = clk.Now })
				body := tc.body
				if stream {
					body = streamed(body)
				}
				r := p.do(tc.path, body, nil)
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				if s := p.finish(); s.Failed() {
					t.Fatalf("run failed:\n%s", summaryText(s))
				}
				verifySet(t, dir)
				records[stream] = withBody(t, tc.provider, readRecord(t, snapshots(t, dir)[tc.provider+"/"+r.header.Get(provider.HeaderSnapshotID)+".json"]))
			}
			if _, ok := records[true]["response"].(map[string]any)["wire"].(map[string]any); !ok {
				t.Fatalf("the streamed record has no response.wire events")
			}
			delete(records[true]["response"].(map[string]any), "wire")
			plain, str := normalizeForCompare(records[false]), normalizeForCompare(records[true])
			if d := jsonDiff("", plain, str); len(d) > 0 {
				t.Errorf("streamed snapshot differs from plain:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// normalizeForCompare drops what legitimately differs between a plain and a
// streamed recording of one call.
func normalizeForCompare(rec map[string]any) map[string]any {
	b, _ := json.Marshal(rec)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	delete(c, "hash")
	req := c["request"].(map[string]any)
	delete(req, "stream")
	resp := c["response"].(map[string]any)
	delete(resp, "stream")
	delete(resp, "latency_ms")
	scrubIDs(resp)
	// OpenAI's plain answers carry "annotations": [] on the message; streams
	// never send the key, and the assembler does not invent it. Like every
	// body field it is a note, never a change (DESIGN §11).
	if body, ok := resp["body"].(map[string]any); ok {
		if choices, ok := body["choices"].([]any); ok {
			for _, ch := range choices {
				if msg, ok := ch.(map[string]any)["message"].(map[string]any); ok {
					if a, ok := msg["annotations"].([]any); ok && len(a) == 0 {
						delete(msg, "annotations")
					}
				}
			}
		}
	}
	return c
}

// jsonDiff lists the pointers where a and b differ.
func jsonDiff(ptr string, a, b any) []string {
	ma, oka := a.(map[string]any)
	mb, okb := b.(map[string]any)
	if oka && okb {
		var out []string
		for k := range ma {
			out = append(out, jsonDiff(ptr+"/"+k, ma[k], mb[k])...)
		}
		for k := range mb {
			if _, ok := ma[k]; !ok {
				out = append(out, fmt.Sprintf("%s/%s: absent → %v", ptr, k, mb[k]))
			}
		}
		return out
	}
	sa, oka := a.([]any)
	sb, okb := b.([]any)
	if oka && okb && len(sa) == len(sb) {
		var out []string
		for i := range sa {
			out = append(out, jsonDiff(fmt.Sprintf("%s/%d", ptr, i), sa[i], sb[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: %v → %v", ptr, a, b)}
	}
	return nil
}

// scrubIDs removes per-call identifiers (id, created) everywhere.
func scrubIDs(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "id")
		delete(x, "created")
		for _, e := range x {
			scrubIDs(e)
		}
	case []any:
		for _, e := range x {
			scrubIDs(e)
		}
	}
}

func TestConcurrentClientsRecordedExactlyOnce(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.ManifestInterval = 20 * time.Millisecond })
	const n = 64
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var path string
			var body map[string]any
			switch i % 4 {
			case 0:
				path, body = "/v1/chat/completions", openaiChat(fmt.Sprintf("Concurrent question %d", i))
			case 1:
				path, body = "/v1/chat/completions", streamed(openaiChat(fmt.Sprintf("Concurrent stream %d", i)))
			case 2:
				path, body = "/v1/messages", anthropicMsg(fmt.Sprintf("Concurrent message %d", i))
			default:
				path, body = "/v1/messages", streamed(anthropicMsg(fmt.Sprintf("Concurrent message stream %d", i)))
			}
			r, err := send(p.srv.URL+path, body, nil)
			if err != nil || r.status != 200 {
				errs <- fmt.Errorf("call %d: %v %d %s", i, err, r.status, r.body)
				return
			}
			ids[i] = r.header.Get(provider.HeaderSnapshotID)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := p.finish()
	if s.Failed() || s.Recorded != n || s.Calls != n {
		t.Fatalf("want %d recorded calls:\n%s", n, summaryText(s))
	}
	if fake.Requests() != n {
		t.Errorf("upstream got %d requests, want %d", fake.Requests(), n)
	}
	files := snapshots(t, dir)
	if len(files) != n {
		t.Errorf("%d snapshot files, want %d", len(files), n)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %s answered twice", id)
		}
		seen[id] = true
	}
	set := verifySet(t, dir)
	if len(set.Manifest.Entries) != n {
		t.Errorf("manifest lists %d entries, want %d", len(set.Manifest.Entries), n)
	}
}

func TestUpstreamResetMidStream(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			fake := startFake(t, fakeupstream.Options{ResetMidStream: true})
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := newProxy(t, dir, fake, nil)
			body := streamed(openaiChat("Reset me"))
			if path == "/v1/messages" {
				body = streamed(anthropicMsg("Reset me"))
			}
			r, err := send(p.srv.URL+path, body, nil)
			if err == nil && r.status == 200 && bytes.Contains(r.body, []byte("[DONE]")) {
				t.Fatalf("the application got a complete stream from a broken upstream")
			}
			s := p.finish()
			if !s.Failed() || !hasKind(s, record.KindBroken) {
				t.Fatalf("want a broken-answer problem, got:\n%s", summaryText(s))
			}
			if n := len(snapshots(t, dir)); n != 0 {
				t.Errorf("%d snapshots written from a broken stream", n)
			}
			verifySet(t, dir)
		})
	}
}

func TestUpstreamErrorsPassedThrough(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{FailStatus: 500})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	direct, err := send(fake.URL+"/v1/chat/completions", openaiChat("Fail please"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		body := openaiChat("Fail please")
		if path == "/v1/messages" {
			body = anthropicMsg("Fail please")
		}
		r := p.do(path, body, nil)
		if r.status != 500 {
			t.Errorf("%s: status %d, want 500", path, r.status)
		}
		if path == "/v1/chat/completions" && !bytes.Equal(r.body, direct.body) {
			t.Errorf("error body changed:\nproxy:  %s\ndirect: %s", r.body, direct.body)
		}
	}
	s := p.finish()
	if s.NotSnapshotted != 2 || !hasKind(s, record.KindUpstreamError) {
		t.Fatalf("want 2 listed upstream errors:\n%s", summaryText(s))
	}
	if !strings.Contains(summaryText(s), "500") {
		t.Errorf("summary does not name the status:\n%s", summaryText(s))
	}
	if n := len(snapshots(t, dir)); n != 0 {
		t.Errorf("%d snapshots written for errors", n)
	}
	verifySet(t, dir)
}

// An SDK retry that succeeds clears the earlier failure of the same request.
func TestRetriedErrorIsNotAFailure(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{FailStatus: 503})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	if r := p.do("/v1/chat/completions", openaiChat("Retry me"), nil); r.status != 503 {
		t.Fatalf("status %d", r.status)
	}
	fake.SetOptions(fakeupstream.Options{})
	if r := p.do("/v1/chat/completions", openaiChat("Retry me"), nil); r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	s := p.finish()
	if s.Failed() || s.Retried != 1 || s.Recorded != 1 {
		t.Fatalf("want one retried call and a clean run:\n%s", summaryText(s))
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	fake.Close()
	r := p.do("/v1/messages", anthropicMsg("Anyone there?"), nil)
	if r.status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", r.status)
	}
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Type != "error" || e.Error.Message == "" {
		t.Errorf("502 body is not in Anthropic's error shape: %s", r.body)
	}
	s := p.finish()
	if !hasKind(s, record.KindUnreachable) {
		t.Fatalf("want an unreachable problem:\n%s", summaryText(s))
	}
}

func TestMissingOrMalformedSource(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	for _, v := range []string{"", "/abs/path.go:1:main", "app.go:0:main", "no-line-here"} {
		hdr := map[string]string{"X-Traceforge-Source": v}
		r := p.do("/v1/chat/completions", openaiChat("Where am I? "+v), hdr)
		if r.status != 200 {
			t.Errorf("source %q: status %d; the application must keep working", v, r.status)
		}
		if fake.LastRequest().Header.Get("X-Traceforge-Source") != "" {
			t.Errorf("source header forwarded upstream")
		}
	}
	s := p.finish()
	if s.NotSnapshotted != 4 || !hasKind(s, record.KindNoSource) {
		t.Fatalf("want 4 calls without source listed:\n%s", summaryText(s))
	}
	if out := summaryText(s); !strings.Contains(out, "docs/sources.md") || !strings.Contains(out, "SourceTransport") {
		t.Errorf("the summary does not say how to attribute calls:\n%s", out)
	}
	if n := len(snapshots(t, dir)); n != 0 {
		t.Errorf("%d snapshots written without source", n)
	}
	verifySet(t, dir)
}

// A call without a source is listed with a fix that names the library its
// User-Agent shows and the helper that fits.
func TestMissingSourceHintNamesTheClient(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	p.do("/v1/chat/completions", openaiChat("Who sent me?"), map[string]string{"User-Agent": "OpenAI/JS 6.49.0", "X-Traceforge-Source": ""})
	out := summaryText(p.finish())
	if !strings.Contains(out, "came from a Node SDK (User-Agent OpenAI/JS 6.49.0)") || !strings.Contains(out, "traceforgeFetch()") {
		t.Errorf("the summary does not name the client and its helper:\n%s", out)
	}
}

func TestPolicyViolationsRefused(t *testing.T) {
	hot := openaiChat("Be creative")
	hot["temperature"] = 0.7
	noSeed := openaiChat("No seed")
	delete(noSeed, "seed")
	hotAnthropic := anthropicMsg("Be creative")
	hotAnthropic["temperature"] = 0.7
	cases := []struct {
		name, path string
		body       map[string]any
		pointer    string
	}{
		{"temperature", "/v1/chat/completions", hot, "/snapshots/0/request/temperature"},
		{"seed", "/v1/chat/completions", noSeed, "/snapshots/0/request/seed"},
		{"anthropic-temperature", "/v1/messages", hotAnthropic, "/snapshots/0/request/temperature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := startFake(t, fakeupstream.Options{})
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := newProxy(t, dir, fake, nil)
			if r := p.do(tc.path, tc.body, nil); r.status != 200 {
				t.Fatalf("status %d; a refused call is still answered", r.status)
			}
			s := p.finish()
			if s.Refused != 1 || !hasKind(s, record.KindRefused) {
				t.Fatalf("want one refused call:\n%s", summaryText(s))
			}
			out := summaryText(s)
			if !strings.Contains(out, tc.pointer) || !strings.Contains(out, "→") {
				t.Errorf("the refusal does not name %s and the fix:\n%s", tc.pointer, out)
			}
			if n := len(snapshots(t, dir)); n != 0 {
				t.Errorf("%d snapshots written", n)
			}
			verifySet(t, dir)
		})
	}
}

func TestSecretInPromptRefused(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	if r := p.do("/v1/chat/completions", openaiChat("my key is "+testKey+" keep it safe"), nil); r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	s := p.finish()
	out := summaryText(s)
	if s.Refused != 1 || !strings.Contains(out, "[REDACTED:openai-api-key]") {
		t.Fatalf("want the call refused with a redacted finding:\n%s", out)
	}
	if strings.Contains(out, testKey) || strings.Contains(p.log.String(), testKey) {
		t.Errorf("the key appears in the summary or log")
	}
	if n := len(snapshots(t, dir)); n != 0 {
		t.Errorf("%d snapshots written", n)
	}
	noKeyOnDisk(t, dir)
	verifySet(t, dir)
}

// Re-recording unchanged calls leaves every file and the manifest byte for
// byte unchanged, even at a later time.
func TestZeroChurnRerecord(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	run := func(clk *clock) *result.RecordSummary {
		p := newProxy(t, dir, fake, func(c *record.Config) { c.Now = clk.Now })
		for _, tc := range allCalls() {
			if r := p.do(tc.path, tc.body, nil); r.status != 200 {
				t.Fatalf("%s: status %d", tc.name, r.status)
			}
			clk.Add(1500 * time.Millisecond)
		}
		return p.finish()
	}
	if s := run(newClock()); s.Failed() || s.Recorded != len(allCalls()) {
		t.Fatalf("first run:\n%s", summaryText(s))
	}
	before := files(t, dir)
	later := newClock()
	later.Add(48 * time.Hour)
	s := run(later)
	if s.Failed() || s.Unchanged != len(allCalls()) || s.Recorded+s.Changed+s.SourceUpdated != 0 {
		t.Fatalf("second run:\n%s", summaryText(s))
	}
	after := files(t, dir)
	delete(before, ".lock")
	delete(after, ".lock")
	if len(before) != len(after) {
		t.Fatalf("%d files before, %d after", len(before), len(after))
	}
	for rel, b := range before {
		if !bytes.Equal(b, after[rel]) {
			t.Errorf("%s changed on an unchanged re-record", rel)
		}
	}
	if _, ok := after["manifest.json"]; !ok {
		t.Fatal("no manifest")
	}
	verifySet(t, dir)
}

// record does not hold the records it wrote: a source rewrite at the end
// reads the file back, and one changed on disk since is left alone and
// logged, not overwritten.
func TestSourceRewriteReadsTheFileBack(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	src := func(line int) map[string]string {
		return map[string]string{"X-Traceforge-Source": "app/a.go:" + strconv.Itoa(line) + ":Ask"}
	}
	for _, edit := range []bool{false, true} {
		os.RemoveAll(dir)
		p := newProxy(t, dir, fake, nil)
		r := p.do("/v1/chat/completions", openaiChat("Read me back"), src(20))
		rel := "openai/" + r.header.Get(provider.HeaderSnapshotID) + ".json"
		p.do("/v1/chat/completions", openaiChat("Read me back"), src(5))
		file := filepath.Join(dir, filepath.FromSlash(rel))
		var edited []byte
		if edit {
			edited = bytes.Replace(mustRead(t, file), []byte(`"Read me back"`), []byte(`"Edited by hand"`), 1)
			if err := os.WriteFile(file, edited, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s := p.finish()
		got := mustRead(t, file)
		if !edit {
			if s.Failed() || s.Recorded != 1 {
				t.Fatalf("want one snapshot recorded:\n%s", summaryText(s))
			}
			if src := readRecord(t, got)["source"].(map[string]any); src["line"] != json.Number("5") {
				t.Fatalf("source = %v, want the smallest of the run (line 5)", src)
			}
			continue
		}
		if !bytes.Equal(got, edited) {
			t.Fatalf("a file changed on disk during the run was overwritten by the source rewrite")
		}
		if log := p.log.String(); !strings.Contains(log, "source of .ai-snapshots/"+rel+" not updated to app/a.go:5:Ask: the file changed since this run stored it") {
			t.Fatalf("log does not say why the source was not updated:\n%s", log)
		}
	}
}

// A changed answer rewrites the snapshot; a new source only rewrites the
// source, keeping timestamp and response.
func TestRerecordChangedAndSourceOnly(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	clk := newClock()
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Now = clk.Now })
	r := p.do("/v1/chat/completions", openaiChat("Moving code"), nil)
	p.finish()
	rel := "openai/" + r.header.Get(provider.HeaderSnapshotID) + ".json"
	first := readRecord(t, snapshots(t, dir)[rel])

	clk.Add(time.Hour)
	p = newProxy(t, dir, fake, func(c *record.Config) { c.Now = clk.Now })
	p.do("/v1/chat/completions", openaiChat("Moving code"), map[string]string{"X-Traceforge-Source": "app/zz.go:9:Later"})
	p.do("/v1/chat/completions", openaiChat("Moving code"), map[string]string{"X-Traceforge-Source": "app/moved.go:3:Ask"})
	s := p.finish()
	if s.Failed() || s.SourceUpdated != 1 {
		t.Fatalf("want one source update:\n%s", summaryText(s))
	}
	second := readRecord(t, snapshots(t, dir)[rel])
	if src := second["source"].(map[string]any); src["file"] != "app/moved.go" || src["line"] != json.Number("3") {
		t.Errorf("source = %v, want the smallest of the run (app/moved.go:3)", src)
	}
	if second["timestamp"] != first["timestamp"] || !reflect.DeepEqual(second["response"], first["response"]) {
		t.Errorf("a source-only change must keep timestamp and response")
	}

	clk.Add(time.Hour)
	fake.SetOptions(fakeupstream.Options{ContentPrefix: "Changed! "})
	p = newProxy(t, dir, fake, func(c *record.Config) { c.Now = clk.Now })
	p.do("/v1/chat/completions", openaiChat("Moving code"), map[string]string{"X-Traceforge-Source": "app/moved.go:3:Ask"})
	s = p.finish()
	if s.Failed() || s.Changed != 1 {
		t.Fatalf("want one changed snapshot:\n%s", summaryText(s))
	}
	third := readRecord(t, snapshots(t, dir)[rel])
	if third["timestamp"] == first["timestamp"] || !strings.HasPrefix(third["response"].(map[string]any)["content"].(string), "Changed! ") {
		t.Errorf("changed answer not recorded: %v", third["response"])
	}
	verifySet(t, dir)
}

func TestNondeterminismWithinRun(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{Nondeterministic: true})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	p.do("/v1/chat/completions", openaiChat("Same question"), nil)
	p.do("/v1/chat/completions", openaiChat("Same question"), nil)
	s := p.finish()
	if !s.Failed() || s.Nondeterministic != 1 || !hasKind(s, record.KindNondeterminism) {
		t.Fatalf("want nondeterminism reported:\n%s", summaryText(s))
	}
	if out := summaryText(s); !strings.Contains(out, "content:") {
		t.Errorf("the report does not show what differs:\n%s", out)
	}
	// Both answers are kept, the second as the request's occurrence 2
	// (DESIGN §13.4), and verify fails on it under the policy.
	if n := len(snapshots(t, dir)); n != 2 {
		t.Errorf("%d snapshots, want the first answer and the second as an occurrence", n)
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := set.Findings; len(fs) != 1 || fs[0].Rule != check.RuleDeterminism || fs[0].Pointer != "/snapshots/0/occurrence" {
		t.Errorf("verify: want the occurrence reported as nondeterminism, got %v", fs)
	}
}

func TestIDCollisionNotWritten(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	// Find the id the proxy will give request Y, then plant a record of a
	// different request X that claims that id.
	y := openaiChat("Request Y")
	yDoc, yID, err := snapshottest.Build(snapshottest.Item{Provider: "openai", Request: y, Response: snapshottest.OpenAIChat("x").Response,
		Source: source.Source{File: "a.go", Line: 1, Function: "f"}, Time: snapshottest.BaseTime})
	if err != nil {
		t.Fatal(err)
	}
	_ = yDoc
	// The planted record lives in the other provider's folder: ids are
	// unique across folders.
	xDoc, _, err := snapshottest.Build(snapshottest.AnthropicMessage("Request X"))
	if err != nil {
		t.Fatal(err)
	}
	xRec := xDoc["snapshots"].([]any)[0].(map[string]any)
	xRec["id"] = yID
	if err := snapshot.Rehash(xRec); err != nil {
		t.Fatal(err)
	}
	xDoc, _ = snapshot.FileDocument(xRec)
	data, _ := snapshot.MarshalFile(xDoc)
	if err := (&snapshot.Store{Dir: dir}).WriteAtomic("anthropic/"+yID+".json", data); err != nil {
		t.Fatal(err)
	}
	before := files(t, dir)
	p := newProxy(t, dir, fake, nil)
	p.do("/v1/chat/completions", y, nil)
	s := p.finish()
	if !hasKind(s, record.KindCollision) || s.Refused != 1 {
		t.Fatalf("want an id collision:\n%s", summaryText(s))
	}
	if _, err := os.Stat(filepath.Join(dir, "openai", yID+".json")); err == nil {
		t.Errorf("the colliding call was written")
	}
	if !bytes.Equal(before["anthropic/"+yID+".json"], files(t, dir)["anthropic/"+yID+".json"]) {
		t.Errorf("the existing file was touched")
	}
}

func TestOnlyMissing(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	hit := p.do("/v1/chat/completions", openaiChat("Known question"), nil)
	p.do("/v1/messages", anthropicMsg("Never asked again"), nil)
	p.finish()
	before := files(t, dir)
	upstreamBefore := fake.Requests()

	p = newProxy(t, dir, fake, func(c *record.Config) { c.OnlyMissing = replay.NewResponder(dir) })
	r := p.do("/v1/chat/completions", openaiChat("Known question"), nil)
	if r.status != 200 || r.header.Get(provider.HeaderSnapshotID) != hit.header.Get(provider.HeaderSnapshotID) {
		t.Fatalf("hit not served from the set: %d %s", r.status, r.body)
	}
	rs := p.do("/v1/chat/completions", streamed(openaiChat("Known question")), nil)
	if rs.status != 200 || !bytes.Contains(rs.body, []byte("data: ")) {
		t.Fatalf("streamed hit not served: %d %s", rs.status, rs.body)
	}
	if fake.Requests() != upstreamBefore {
		t.Fatalf("a hit contacted the upstream")
	}
	miss := p.do("/v1/chat/completions", openaiChat("New question"), nil)
	if miss.status != 200 || fake.Requests() != upstreamBefore+1 {
		t.Fatalf("miss not forwarded")
	}
	s := p.finish()
	if s.Failed() || s.Served != 2 || s.Recorded != 1 {
		t.Fatalf("want 2 served, 1 recorded:\n%s", summaryText(s))
	}
	if len(s.Unrequested) != 1 || !strings.HasPrefix(s.Unrequested[0], ".ai-snapshots/anthropic/") {
		t.Errorf("unrequested = %v, want the anthropic snapshot", s.Unrequested)
	}
	after := files(t, dir)
	for rel, b := range before {
		if rel != "manifest.json" && !bytes.Equal(b, after[rel]) {
			t.Errorf("%s changed", rel)
		}
	}
	verifySet(t, dir)

	// An invalid set is refused before anything is served.
	for rel := range snapshots(t, dir) {
		_ = os.WriteFile(filepath.Join(dir, rel), []byte("{"), 0o644)
		break
	}
	_, err := record.New(record.Config{Dir: dir, OnlyMissing: replay.NewResponder(dir), Upstreams: map[provider.Name]string{provider.OpenAI: fake.URL + "/v1", provider.Anthropic: fake.URL}})
	var inv *record.InvalidSetError
	if err == nil || !asInvalid(err, &inv) || len(inv.Findings) == 0 {
		t.Fatalf("want InvalidSetError, got %v", err)
	}
}

func asInvalid(err error, target **record.InvalidSetError) bool {
	e, ok := err.(*record.InvalidSetError)
	if ok {
		*target = e
	}
	return ok
}

// The first streamed event reaches the application while the upstream is
// still sending: the proxy does not buffer streams.
func TestFirstChunkBeforeUpstreamFinishes(t *testing.T) {
	const delay = 150 * time.Millisecond
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			fake := startFake(t, fakeupstream.Options{ChunkDelay: delay})
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := newProxy(t, dir, fake, nil)
			body := streamed(openaiChat("one two three four five six"))
			if path == "/v1/messages" {
				body = streamed(anthropicMsg("one two three four five six"))
			}
			data, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, p.srv.URL+path, bytes.NewReader(data))
			req.Header.Set("Authorization", "Bearer "+testKey)
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("X-Traceforge-Source", srcHeader)
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			var first time.Duration
			for {
				line, err := br.ReadString('\n')
				if strings.HasPrefix(line, "data: ") && first == 0 {
					first = time.Since(start)
				}
				if err != nil {
					break
				}
			}
			total := time.Since(start)
			if first == 0 {
				t.Fatal("no data event")
			}
			if total-first < 3*delay {
				t.Errorf("first event after %v, stream done after %v: the proxy buffered the stream", first, total)
			}
			if s := p.finish(); s.Failed() || s.Recorded != 1 {
				t.Fatalf("run failed:\n%s", summaryText(s))
			}
			verifySet(t, dir)
		})
	}
}

// Compressed answers: the application gets the bytes as sent, the snapshot
// the decoded content.
func TestGzipAnswer(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{Gzip: true})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	r := p.do("/v1/chat/completions", openaiChat("Compressed please"), map[string]string{"Accept-Encoding": "br, gzip"})
	if r.status != 200 || r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, encoding %q", r.status, r.header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("the application did not get gzip bytes: %v", err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Contains(plain, []byte("Echo:")) {
		t.Errorf("decoded answer: %s", plain)
	}
	if got := fake.LastRequest().Header.Get("Accept-Encoding"); got != "gzip" {
		t.Errorf("upstream Accept-Encoding = %q, want gzip", got)
	}
	s := p.finish()
	if s.Failed() || s.Recorded != 1 {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	rec := readRecord(t, snapshots(t, dir)["openai/"+r.header.Get(provider.HeaderSnapshotID)+".json"])
	if c := rec["response"].(map[string]any)["content"].(string); !strings.HasPrefix(c, "Echo:") {
		t.Errorf("snapshot content = %q", c)
	}
	verifySet(t, dir)
}

// Hop-by-hop headers (and those named in Connection) are dropped,
// X-Forwarded-Host never chooses anything, the path maps onto the upstream
// base.
func TestForwardedRequestHeaders(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.Upstreams[provider.OpenAI] = fake.URL + "/prefix/v1" })
	p.do("/v1/chat/completions", openaiChat("Headers"), map[string]string{
		"Connection":       "X-Secret-Hop",
		"X-Secret-Hop":     "1",
		"Keep-Alive":       "timeout=5",
		"X-Forwarded-Host": "evil.example",
		"X-Stainless-Lang": "js",
	})
	last := fake.LastRequest()
	if last.Path != "/prefix/v1/chat/completions" {
		t.Errorf("upstream path %q", last.Path)
	}
	for _, h := range []string{"X-Secret-Hop", "Keep-Alive", "X-Forwarded-Host", "X-Traceforge-Source"} {
		if last.Header.Get(h) != "" {
			t.Errorf("%s forwarded upstream", h)
		}
	}
	if last.Header.Get("X-Stainless-Lang") != "js" {
		t.Errorf("an end-to-end header was dropped")
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
}

func TestUnknownPathForwardedAndListed(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	r := p.do("/v1/moderations", map[string]any{"model": "omni-moderation-latest", "input": "hi"}, nil)
	if r.status != 404 { // the fake does not know moderations
		t.Errorf("status %d", r.status)
	}
	if fake.LastRequest().Path != "/v1/moderations" {
		t.Errorf("not forwarded to the OpenAI upstream: %q", fake.LastRequest().Path)
	}
	s := p.finish()
	if !s.Failed() || !hasKind(s, record.KindUnknownPath) {
		t.Fatalf("want an unknown-path problem:\n%s", summaryText(s))
	}
	// The problem says what is recorded (issue 13).
	if text := summaryText(s); !strings.Contains(text, "…/v1/chat/completions") || !strings.Contains(text, "…/api/chat") {
		t.Errorf("the problem does not list the served routes:\n%s", text)
	}
}

func TestHostCheck(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	data, _ := json.Marshal(openaiChat("rebind"))
	req, _ := http.NewRequest(http.MethodPost, p.srv.URL+"/v1/chat/completions", bytes.NewReader(data))
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || fake.Requests() != 0 {
		t.Errorf("status %d, upstream requests %d", resp.StatusCode, fake.Requests())
	}
}

// The manifest is written while recording, not only at the end, so that a
// killed run loses at most the call in flight.
func TestManifestFlushedWhileRecording(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, func(c *record.Config) { c.ManifestInterval = 10 * time.Millisecond })
	r := p.do("/v1/chat/completions", openaiChat("Flush me"), nil)
	id := r.header.Get(provider.HeaderSnapshotID)
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err == nil && bytes.Contains(b, []byte(id)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("manifest not written while the proxy runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	verifySet(t, dir) // a set that verify passes, mid-run
}

func TestPrune(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	keep := p.do("/v1/chat/completions", openaiChat("Keep me"), nil)
	drop := p.do("/v1/chat/completions", openaiChat("Drop me"), nil)
	p.finish()
	p = newProxy(t, dir, fake, nil)
	p.do("/v1/chat/completions", openaiChat("Keep me"), nil)
	s := p.finish()
	if len(s.Unrequested) != 1 {
		t.Fatalf("unrequested = %v", s.Unrequested)
	}
	removed, err := p.rec.Prune()
	if err != nil || len(removed) != 1 || !strings.Contains(removed[0], drop.header.Get(provider.HeaderSnapshotID)) {
		t.Fatalf("prune removed %v (%v)", removed, err)
	}
	left := snapshots(t, dir)
	if len(left) != 1 || left["openai/"+keep.header.Get(provider.HeaderSnapshotID)+".json"] == nil {
		t.Errorf("left %v", left)
	}
	verifySet(t, dir)
}

// gzipUpstream serves the fake's answers gzip-compressed, streams included
// (the fake itself only compresses JSON).
func gzipUpstream(t *testing.T) *httptest.Server {
	fake := fakeupstream.New(fakeupstream.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(rec.Code)
		zw := gzip.NewWriter(w)
		_, _ = zw.Write(rec.Body.Bytes())
		_ = zw.Close()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestGzipStreams(t *testing.T) {
	up := gzipUpstream(t)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	rec, err := record.New(record.Config{Dir: dir, Display: ".ai-snapshots", Upstreams: map[provider.Name]string{provider.OpenAI: up.URL + "/v1", provider.Anthropic: up.URL}, ManifestInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	defer srv.Close()
	gz := map[string]string{"Accept-Encoding": "gzip"}

	// Anthropic stream: the application gets the gzip bytes as sent.
	r, err := send(srv.URL+"/v1/messages", streamed(anthropicMsg("Zipped stream")), gz)
	if err != nil || r.status != 200 || r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("anthropic: %v %d %q", err, r.status, r.header.Get("Content-Encoding"))
	}
	if _, err := gzip.NewReader(bytes.NewReader(r.body)); err != nil {
		t.Errorf("anthropic stream not passed through compressed: %v", err)
	}

	// OpenAI stream without include_usage: the proxy strips usage, so the
	// application gets the stream decoded.
	r2, err := send(srv.URL+"/v1/chat/completions", streamed(openaiChat("Zipped chat stream")), gz)
	if err != nil || r2.status != 200 {
		t.Fatalf("openai: %v %d", err, r2.status)
	}
	if r2.header.Get("Content-Encoding") != "" {
		t.Errorf("stripped stream still marked %q", r2.header.Get("Content-Encoding"))
	}
	if bytes.Contains(r2.body, []byte(`"usage"`)) || !bytes.Contains(r2.body, []byte("[DONE]")) {
		t.Errorf("stripped stream:\n%s", r2.body)
	}
	srv.Close()
	s := rec.Finish()
	if s.Failed() || s.Recorded != 2 {
		t.Fatalf("want both recorded:\n%s", summaryText(s))
	}
	verifySet(t, dir)
}

func TestRequestBodyCap(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := newProxy(t, dir, fake, nil)
	big := append([]byte(`{"model":"x","messages":[{"role":"user","content":"`), bytes.Repeat([]byte("a"), 33<<20)...)
	big = append(big, `"}]}`...)
	r, err := send(p.srv.URL+"/v1/chat/completions", big, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusRequestEntityTooLarge || fake.Requests() != 0 {
		t.Errorf("status %d, upstream requests %d", r.status, fake.Requests())
	}
}

// An agent loop (tool call, tool result, answer) re-recorded: the provider
// picks new tool-call ids every run, yet the keys, the lineage and every byte
// on disk stay the same.
func TestAgentLoopRerecordIsStable(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	loop := func(p *proxy) {
		// OpenAI
		first := withTools("openai", openaiChat("What is the weather in Paris?"))
		r := p.do("/v1/chat/completions", first, nil)
		var body map[string]any
		_ = json.Unmarshal(r.body, &body)
		msg := body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		call := msg["tool_calls"].([]any)[0].(map[string]any)
		follow := withTools("openai", openaiChat("What is the weather in Paris?"))
		follow["messages"] = append(follow["messages"].([]any), msg,
			map[string]any{"role": "tool", "tool_call_id": call["id"], "content": "18°C, sunny"})
		if r := p.do("/v1/chat/completions", follow, nil); r.status != 200 {
			t.Fatalf("follow-up: %d %s", r.status, r.body)
		}
		// Anthropic
		a := withTools("anthropic", anthropicMsg("What is the weather in Oslo?"))
		r = p.do("/v1/messages", a, nil)
		_ = json.Unmarshal(r.body, &body)
		var use map[string]any
		for _, b := range body["content"].([]any) {
			if bm := b.(map[string]any); bm["type"] == "tool_use" {
				use = bm
			}
		}
		af := withTools("anthropic", anthropicMsg("What is the weather in Oslo?"))
		af["messages"] = append(af["messages"].([]any),
			map[string]any{"role": "assistant", "content": body["content"]},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": use["id"], "content": "-3°C, snow"}}})
		if r := p.do("/v1/messages", af, nil); r.status != 200 {
			t.Fatalf("anthropic follow-up: %d %s", r.status, r.body)
		}
	}
	p := newProxy(t, dir, fake, nil)
	loop(p)
	if s := p.finish(); s.Failed() || s.Recorded != 4 {
		t.Fatalf("first run:\n%s", summaryText(s))
	}
	set := verifySet(t, dir)
	turns := 0
	for _, s := range set.Snapshots {
		if s.Record.ParentID != "" {
			turns++
		}
	}
	if turns != 2 {
		t.Errorf("%d snapshots with lineage, want 2", turns)
	}
	before := files(t, dir)
	p = newProxy(t, dir, fake, nil)
	loop(p)
	if s := p.finish(); s.Failed() || s.Unchanged != 4 {
		t.Fatalf("second run:\n%s", summaryText(s))
	}
	after := files(t, dir)
	for rel, b := range before {
		if rel != ".lock" && !bytes.Equal(b, after[rel]) {
			t.Errorf("%s changed", rel)
		}
	}
}
