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
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	rec, err := record.New(record.Config{Dir: dir, OpenAIUpstream: up.URL + "/v1", AnthropicUpstream: up.URL, ManifestInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	first := responsesCall("responses-plain", "Summarize: traceforge records LLM calls", nil)
	second := responsesCall("responses-stream", "Stream: why replay matters", map[string]any{"stream": true})
	src := map[string]string{"X-Traceforge-Source": "app/main.go:10:ask"}

	var upstream []map[string]any
	resp, data := send(t, proxy.URL, first, first.body, src)
	if resp.StatusCode != 200 {
		t.Fatalf("record: %d %s", resp.StatusCode, data)
	}
	a := answer(t, first, data)
	upstream = append(upstream, a)
	_, data = send(t, proxy.URL, second, second.body, src)
	upstream = append(upstream, answer(t, second, data))
	chained := responsesCall("responses-chained", "And in one word?", map[string]any{"stream": true, "previous_response_id": a["id"]})
	_, data = send(t, proxy.URL, chained, chained.body, src)
	upstream = append(upstream, answer(t, chained, data))
	proxy.Close()
	if s := rec.Finish(); s.Failed() {
		t.Fatalf("record failed: %+v", s.Problems)
	}
	up.Close()

	_, set := loadSet(t, dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()

	resp, data = send(t, srv.URL, first, first.body, nil)
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
