package verify

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
)

func responsesCall(name string, input any, extra map[string]any) call {
	body := map[string]any{"model": "gpt-4.1-mini", "input": input, "temperature": 0, "max_output_tokens": 64}
	for k, v := range extra {
		body[k] = v
	}
	return call{name: name, provider: provider.OpenAI, path: "/v1/responses", body: body}
}

// TestReplayResponsesChain records a Responses conversation through the
// recording proxy against an upstream that mints ids (plain, streamed, and a
// streamed call chained by previous_response_id), stops the upstream, and
// replays it: each answer equals the recorded one, the first answer carries
// its recorded id, and the chained request naming that id is a hit. A
// changed prompt is a miss with a diff against the closest snapshot.
func TestReplayResponsesChain(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{MintIDs: true})
	first := responsesCall("responses-plain", "Summarize: traceforge records LLM calls", nil)
	second := responsesCall("responses-stream", "Stream: why replay matters", map[string]any{"stream": true})
	chained := responsesCall("responses-chained", "And in one word?", map[string]any{"stream": true})
	dir, upstream := recordResponses(t, up, first, second, chained)
	a := upstream[0]
	up.Close()

	_, set, served := loadServed(t, dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()

	resp, data := send(t, srv.URL, first, first.body, nil)
	got := answer(t, first, data)
	if resp.StatusCode != 200 || got["id"] != a["id"] {
		t.Fatalf("replayed first answer: %d id %v, want the recorded id %v", resp.StatusCode, got["id"], a["id"])
	}
	resp, data = send(t, srv.URL, second, second.body, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("replayed stream: %d %s", resp.StatusCode, data)
	}
	replayed := []map[string]any{got, answer(t, second, data)}
	chained.body["previous_response_id"] = got["id"]
	resp, data = send(t, srv.URL, chained, chained.body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("chained call: %d %s", resp.StatusCode, data)
	}
	replayed = append(replayed, answer(t, chained, data))
	for i, c := range []call{first, second, chained} {
		if d := provider.Diff(appView(t, c, upstream[i]), appView(t, c, replayed[i])); len(d) > 0 {
			t.Errorf("%s: replay differs from the upstream: %v", c.name, d)
		}
	}

	changed := responsesCall("responses-plain", "Summarize: traceforge records every LLM call", nil)
	resp, data = send(t, srv.URL, changed, changed.body, nil)
	var e struct{ Error struct{ Type string } }
	if resp.StatusCode != 404 || json.Unmarshal(data, &e) != nil || e.Error.Type == "" {
		t.Fatalf("changed prompt: %d %s", resp.StatusCode, data)
	}
	r := rs.Finish()
	if len(r.Misses) != 1 || !strings.Contains(r.Misses[0].Diff, `"input": "Summarize: traceforge records every LLM call"`) || r.Served != 3 {
		t.Fatalf("report: served %d misses %+v", r.Served, r.Misses)
	}
}

// recordResponses records calls through the recording proxy; the last call
// is chained (previous_response_id) to the first one's answer. It returns
// the snapshot folder and the answers the application got.
func recordResponses(t *testing.T, up *fakeupstream.Server, calls ...call) (string, []map[string]any) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	rec, err := record.New(record.Config{Dir: dir, Upstreams: map[provider.Name]string{provider.OpenAI: up.URL + "/v1", provider.Anthropic: up.URL}, ManifestInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	src := map[string]string{"X-Traceforge-Source": "app/main.go:10:ask"}
	var answers []map[string]any
	for i, c := range calls {
		if i == len(calls)-1 && i > 0 {
			c.body["previous_response_id"] = answers[0]["id"]
		}
		resp, data := send(t, proxy.URL, c, c.body, src)
		if resp.StatusCode != 200 {
			t.Fatalf("record %s: %d %s", c.name, resp.StatusCode, data)
		}
		answers = append(answers, answer(t, c, data))
	}
	proxy.Close()
	if s := rec.Finish(); s.Failed() {
		t.Fatalf("record failed: %+v", s.Problems)
	}
	return dir, answers
}

// TestLiveResponsesChain: verify --live runs a chain root first and sends
// the child with the root's live response id, not the recorded one (the
// real API would not know it).
func TestLiveResponsesChain(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{MintIDs: true})
	root := responsesCall("responses-root", "Name one prime number.", nil)
	child := responsesCall("responses-child", "Another one?", nil)
	dir, answers := recordResponses(t, up, root, child)
	rep := runLive(t, dir, nil, up, 1)
	if rep.Failed() {
		t.Fatalf("live: %+v", rep.Live)
	}
	var last map[string]any
	if err := json.Unmarshal(up.LastRequest().Body, &last); err != nil {
		t.Fatal(err)
	}
	prev, _ := last["previous_response_id"].(string)
	if last["input"] != "Another one?" || prev == "" || prev == answers[0]["id"] {
		t.Fatalf("the chained live request sent previous_response_id %q (recorded %v); want the root's live id", prev, answers[0]["id"])
	}
}
