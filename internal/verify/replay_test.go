package verify

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestReplayReproducesUpstream records the table through the fake upstream,
// stops it, replays the same calls and checks the application sees the same
// answers (the one equality, streams re-assembled) with zero upstream calls.
func TestReplayReproducesUpstream(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	calls := table()
	rec := recordTable(t, up, calls)
	recordedCalls := up.Requests()
	up.Close()

	_, set, served := loadServed(t, rec.dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()

	for i, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			resp, data := send(t, srv.URL, c, c.body, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("replay answered %d: %s", resp.StatusCode, data)
			}
			if id := resp.Header.Get(provider.HeaderSnapshotID); len(id) != 12 {
				t.Errorf("X-Traceforge-Snapshot-Id = %q", id)
			}
			wantCT := "application/json"
			if c.stream() {
				wantCT = "text/event-stream"
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, wantCT) {
				t.Errorf("Content-Type = %q, want %s", ct, wantCT)
			}
			if c.stream() {
				switch c.provider {
				case provider.OpenAI:
					if !bytes.HasSuffix(data, []byte("data: [DONE]\n\n")) {
						t.Errorf("OpenAI stream does not end with [DONE]")
					}
					_, asked := c.body["stream_options"]
					if hasUsage := bytes.Contains(data, []byte(`"choices":[],`)); hasUsage != asked {
						t.Errorf("usage chunk present = %v, include_usage asked = %v", hasUsage, asked)
					}
				case provider.Anthropic:
					if !bytes.Contains(data, []byte("event: message_stop\n")) {
						t.Errorf("Anthropic stream has no message_stop event")
					}
				}
			}
			got := appView(t, c, answer(t, c, data))
			if d := provider.Diff(rec.upstream[i], got); len(d) > 0 {
				t.Fatalf("replayed answer differs from the upstream's:\n%s", strings.Join(d, "\n"))
			}
			if c.name == "openai-tools" || c.name == "anthropic-tools" {
				if len(got.ToolCalls) == 0 {
					t.Fatalf("tool call lost in replay")
				}
			}
		})
	}
	if n := up.Requests(); n != recordedCalls {
		t.Fatalf("upstream got %d requests during replay", n-recordedCalls)
	}
	rep := &result.VerifyReport{Mode: "replay"}
	rep.Replayed = rs.Finish()
	if len(rep.Misses) != 0 || len(rep.Unused) != 0 || rep.Served != len(calls) || rep.Failed() {
		t.Fatalf("report: misses %v unused %v served %d", rep.Misses, rep.Unused, rep.Served)
	}
}

func TestReplayMissAndUnused(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	calls := table()[:3]
	calls = append(calls, table()[6])
	rec := recordTable(t, up, calls)
	up.Close()
	_, set, served := loadServed(t, rec.dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()

	// A changed prompt from the same place in the code.
	changed := calls[0]
	changed.body = openaiChat("Summarize: traceforge records every LLM call", nil)
	for range 2 {
		resp, data := send(t, srv.URL, changed, changed.body, map[string]string{"X-Traceforge-Source": calls[0].sourceHeader(0)})
		if resp.StatusCode != 404 || resp.Header.Get("x-should-retry") != "false" {
			t.Fatalf("miss answered %d %v", resp.StatusCode, resp.Header)
		}
		var e struct {
			Error struct{ Message, Type string }
		}
		if err := json.Unmarshal(data, &e); err != nil || !strings.Contains(e.Error.Message, "traceforge record --only-missing") {
			t.Fatalf("miss body %s (%v)", data, err)
		}
	}
	// An Anthropic miss gets Anthropic's error shape.
	anth := calls[3]
	anth.body = anthropicMsg("Something never recorded", nil)
	resp, data := send(t, srv.URL, anth, anth.body, nil)
	if resp.StatusCode != 404 || !strings.Contains(string(data), `"type":"error"`) {
		t.Fatalf("anthropic miss: %d %s", resp.StatusCode, data)
	}
	// An endpoint the format does not cover.
	mod := call{name: "moderations", provider: provider.OpenAI, path: "/v1/moderations"}
	resp, _ = send(t, srv.URL, mod, map[string]any{"model": "omni-moderation-latest", "input": "x"}, nil)
	if resp.StatusCode != 404 || resp.Header.Get("x-should-retry") != "false" {
		t.Fatalf("moderations: %d", resp.StatusCode)
	}
	// One hit, so the other two are unused.
	if resp, _ := send(t, srv.URL, calls[1], calls[1].body, nil); resp.StatusCode != 200 {
		t.Fatal("hit failed")
	}

	rep, _ := loadSet(t, rec.dir, nil)
	rep.Mode = "replay"
	rep.Replayed = rs.Finish()
	if len(rep.Misses) != 3 {
		t.Fatalf("misses: %+v", rep.Misses)
	}
	m := rep.Misses[0]
	if m.Count != 2 || m.Source != calls[0].sourceHeader(0) || m.Closest == "" {
		t.Fatalf("miss: %+v", m)
	}
	if !strings.Contains(m.Diff, `-        "content": "Summarize: traceforge records LLM calls"`) ||
		!strings.Contains(m.Diff, `+        "content": "Summarize: traceforge records every LLM call"`) || !strings.HasPrefix(m.Diff, "--- .ai-snapshots/openai/") {
		t.Fatalf("diff:\n%s", m.Diff)
	}
	if rep.Misses[1].Provider != "anthropic" || !strings.HasPrefix(rep.Misses[1].Closest, ".ai-snapshots/anthropic/") {
		t.Fatalf("anthropic miss: %+v", rep.Misses[1])
	}
	if rep.Misses[2].Key != "" || !strings.Contains(rep.Misses[2].Reason, "/v1/moderations") {
		t.Fatalf("unsupported call: %+v", rep.Misses[2])
	}
	if len(rep.Unused) != 3 {
		t.Fatalf("unused: %v", rep.Unused)
	}
	if !rep.Failed() {
		t.Fatal("a miss must fail the report")
	}
	var text bytes.Buffer
	if err := render.Verify(&text, rep, "text", false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unmatched openai request /v1/chat/completions", "closest snapshots:\n  1. .ai-snapshots/openai/", "@@ ", "requested 2 times", "3 snapshot(s) were never requested", "FAIL 3 unmatched request(s)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

func TestClosestPrefersSourceThenModel(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	calls := []call{
		{"a", provider.OpenAI, "/v1/chat/completions", openaiChat("Alpha prompt about cats", nil), nil},
		{"b", provider.OpenAI, "/v1/chat/completions", openaiChat("Beta prompt about dogs", map[string]any{"model": "gpt-4o"}), nil},
		{"c", provider.OpenAI, "/v1/chat/completions", openaiChat("Gamma prompt about cats and dogs", nil), nil},
	}
	rec := recordTable(t, up, calls)
	_, set, served := loadServed(t, rec.dir, nil)
	rel := func(c call, i int) string {
		for _, s := range set.Snapshots {
			if s.Record.Source == c.source(i) {
				return s.Rel
			}
		}
		t.Fatal("no snapshot")
		return ""
	}
	parse := func(body map[string]any) *provider.Request {
		r, err := registry.Parse("POST", "/v1/chat/completions", nil, marshalJSON(t, body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Same source wins even with another model.
	src := calls[1].source(1)
	if got := Closest(parse(openaiChat("Alpha prompt about cats!", nil)), &src, set.Snapshots, served); got.Rel != rel(calls[1], 1) {
		t.Errorf("same source: got %s", got.Rel)
	}
	// Without a source, same model and endpoint first, then similar messages.
	if got := Closest(parse(openaiChat("Gamma prompt about cats and dogs!", nil)), nil, set.Snapshots, served); got.Rel != rel(calls[2], 2) {
		t.Errorf("similar messages: got %s", got.Rel)
	}
	if got := Closest(parse(openaiChat("Beta prompt about dogs", map[string]any{"model": "gpt-4o", "seed": 8})), nil, set.Snapshots, served); got.Rel != rel(calls[1], 1) {
		t.Errorf("same model: got %s", got.Rel)
	}
}

func TestReplayReportGolden(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	calls := []call{table()[0], table()[6]}
	legacy := snapshottest.OpenAIChat("a snapshot migrated from 0.9.0, without body")
	rec := recordTable(t, up, calls, legacy)
	up.Close()
	_, set, served := loadServed(t, rec.dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()

	legacyCall := call{name: "legacy", provider: provider.OpenAI, path: "/v1/chat/completions", body: legacy.Request}
	for _, c := range []call{calls[0], legacyCall} {
		c.body["stream"] = true
		if resp, data := send(t, srv.URL, c, c.body, nil); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, data)
		}
	}
	changed := calls[0]
	changed.body = openaiChat("Summarize: traceforge records LLM calls", map[string]any{"temperature": 0.2})
	send(t, srv.URL, changed, changed.body, map[string]string{"X-Traceforge-Source": calls[0].sourceHeader(0)})
	send(t, srv.URL, call{name: "models", provider: provider.OpenAI, path: "/v1/moderations"}, map[string]any{"model": "omni-moderation-latest", "input": "x"}, nil)

	for _, failOnUnused := range []bool{false, true} {
		rep, _ := loadSet(t, rec.dir, nil)
		rep.Mode = "replay"
		rep.FailOnUnused = failOnUnused
		rep.Command = "go test ./..."
		code := 0
		rep.ExitCode = &code
		rep.Replayed = rs.Finish()
		if len(rep.Synthesized) != 1 || len(rep.Unused) != 1 || len(rep.Misses) != 2 || rep.Served != 2 {
			t.Fatalf("report: %+v", rep)
		}
		suffix := ""
		if failOnUnused {
			suffix = "_fail_on_unused"
		}
		for _, f := range render.Formats {
			if f == "html" {
				continue // the page is tested in internal/render, in a browser
			}
			var b bytes.Buffer
			if err := render.Verify(&b, rep, f, false); err != nil {
				t.Fatal(err)
			}
			ext := map[string]string{"text": "txt", "json": "json", "junit": "xml", "github": "github.txt"}[f]
			goldenFile(t, "replay"+suffix+"."+ext, b.String())
			if f == "junit" {
				doc := parseJUnit(t, b.Bytes())
				// 3 snapshots + 2 unmatched calls; failures: the 2 calls, plus the unused snapshot with the flag.
				wantFail := 2
				if failOnUnused {
					wantFail = 3
				}
				if doc.Tests != 5 || doc.Failures != wantFail {
					t.Errorf("junit tests %d failures %d", doc.Tests, doc.Failures)
				}
			}
			if f == "json" {
				var v map[string]any
				if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["ok"] != false {
					t.Errorf("json: %v %v", err, v["ok"])
				}
			}
		}
	}
}

func TestReplayLatencyAndGuard(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	calls := table()[:1]
	rec := recordTable(t, up, calls)
	_, set, served := loadServed(t, rec.dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots", Latency: true})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()
	start := time.Now()
	if resp, _ := send(t, srv.URL, calls[0], calls[0].body, nil); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if d := time.Since(start); d < 12*time.Millisecond {
		t.Errorf("answered after %v, recorded latency is 12ms", d)
	}
	// DNS rebinding: a non-loopback Host is refused in the provider's shape.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader("{}"))
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-should-retry") != "false" {
		t.Fatalf("foreign Host: %d", resp.StatusCode)
	}
	if up.Requests() != 1 {
		t.Fatalf("upstream contacted during replay")
	}
}
