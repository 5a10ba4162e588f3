package verify

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
)

func exchangeCall(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if strings.Contains(url, "/messages") {
		req.Header.Set("x-api-key", "sk-ant-test")
		req.Header.Set("anthropic-version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer sk-test")
	}
	req.Header.Set("X-Traceforge-Source", "agent.py:9:run")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// An exchange set loaded as verify -- COMMAND loads it (compacted for
// serving) replays its answers, polls in turn; a drifted exchange is a
// miss explained against the closest snapshot, with the diff of the body
// member that changed; the report counts exchanges apart.
func TestReplayExchangesAndTheirDrift(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	dir := t.TempDir()
	rec, err := record.New(record.Config{Dir: dir, Display: ".ai-snapshots", ManifestInterval: -1,
		Upstreams: map[provider.Name]string{provider.OpenAI: up.URL + "/v1", provider.Anthropic: up.URL}})
	if err != nil {
		t.Fatal(err)
	}
	rsrv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	const count = `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"How many tokens is this?"}]}`
	exchangeCall(t, "POST", rsrv.URL+"/v1/messages/count_tokens", count)
	_, created := exchangeCall(t, "POST", rsrv.URL+"/v1/responses", `{"model":"gpt-4.1-mini","input":"later","background":true,"temperature":0,"max_output_tokens":16}`)
	id, _ := created["id"].(string)
	for i := 0; i < 3; i++ {
		exchangeCall(t, "GET", rsrv.URL+"/v1/responses/"+id, "")
	}
	rsrv.Close()
	if s := rec.Finish(); s.Failed() || s.Exchanges != 5 {
		t.Fatalf("record: %+v", s)
	}
	up.Close()

	_, set, entries := loadServed(t, dir, nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: entries, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()
	if code, m := exchangeCall(t, "POST", srv.URL+"/v1/messages/count_tokens", count); code != 200 || m["input_tokens"] == nil {
		t.Fatalf("count tokens: %d %v", code, m)
	}
	if code, m := exchangeCall(t, "POST", srv.URL+"/v1/responses", `{"model":"gpt-4.1-mini","input":"later","background":true,"temperature":0,"max_output_tokens":16}`); code != 200 || m["status"] != "queued" {
		t.Fatalf("create: %d %v", code, m)
	}
	var polls []string
	for i := 0; i < 4; i++ {
		_, m := exchangeCall(t, "GET", srv.URL+"/v1/responses/"+id, "")
		polls = append(polls, m["status"].(string))
	}
	if got := strings.Join(polls, ","); got != "in_progress,in_progress,completed,completed" {
		t.Errorf("polls: %s", got)
	}
	if code, _ := exchangeCall(t, "POST", srv.URL+"/v1/messages/count_tokens", strings.Replace(count, "this", "that", 1)); code != 404 {
		t.Fatalf("a drifted exchange: %d", code)
	}
	rep := rs.Finish()
	if rep.Served != 6 || rep.Exchanges != 6 || len(rep.Misses) != 1 || len(rep.Unused) != 0 {
		t.Fatalf("report: served %d, exchanges %d, misses %d, unused %v", rep.Served, rep.Exchanges, len(rep.Misses), rep.Unused)
	}
	m := rep.Misses[0]
	if m.Endpoint != "POST /v1/messages/count_tokens" || m.Closest == "" || !strings.Contains(m.Diff, `"How many tokens is that?"`) {
		t.Errorf("miss: endpoint %q closest %q diff:\n%s", m.Endpoint, m.Closest, m.Diff)
	}
}
