package record_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/verify"
)

// call sends method url with body (nil: none) and the test's source and
// credentials, as an SDK does for a provider's non-LLM routes.
func call(t *testing.T, method, url string, body []byte, hdr map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("X-Traceforge-Source", srcHeader)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// An application that counts tokens, starts a background response, polls
// it until it is completed, and asks for an unknown id: record keeps each
// exchange (the "queued" create and the 404 too; the polls as ordered
// occurrences) and replay answers the same sequence offline, the last
// poll repeating.
func TestExchangesRecordAndReplayInOrder(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := t.TempDir()
	p := newProxy(t, dir, fake, nil)

	var backgroundID string
	app := func(base string) []string {
		var seen []string
		r := call(t, "POST", base+"/v1/responses/input_tokens", []byte(`{"model":"gpt-4.1-mini","input":"count these four words"}`), nil)
		seen = append(seen, r.header.Get("Content-Type")+" "+string(r.body))
		r = call(t, "POST", base+"/v1/messages/count_tokens", []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"two words"}]}`),
			map[string]string{"anthropic-version": "2023-06-01", "x-api-key": testKey})
		seen = append(seen, string(r.body))
		if r.status != 200 {
			t.Fatalf("count_tokens: %d %s", r.status, r.body)
		}
		r = call(t, "POST", base+"/v1/responses", []byte(`{"model":"gpt-4.1-mini","input":"Later please","background":true,"temperature":0,"max_output_tokens":64}`), nil)
		id := jsonObject(t, r.body)["id"].(string)
		backgroundID = id
		if s := jsonObject(t, r.body)["status"]; s != "queued" {
			t.Fatalf("background create: %s", r.body)
		}
		for i := 0; i < 4; i++ {
			r = call(t, "GET", base+"/v1/responses/"+id, nil, nil)
			seen = append(seen, jsonObject(t, r.body)["status"].(string))
		}
		r = call(t, "GET", base+"/v1/responses/resp_unknown?include=usage", nil, nil)
		seen = append(seen, r.header.Get("Content-Type")+" "+string(r.body))
		if r.status != 404 {
			t.Fatalf("unknown id: %d %s", r.status, r.body)
		}
		return seen
	}
	recorded := app(p.srv.URL)
	if strings.Join(recorded[2:6], ",") != "in_progress,in_progress,completed,completed" {
		t.Fatalf("the fake's polling: %v", recorded)
	}
	sum := p.finish()
	if sum.Exchanges != 8 || sum.Failed() || sum.Recorded != 8 {
		t.Errorf("want 8 exchanges recorded (the background create, answered \"queued\" without usage, among them):\n%s", summaryText(sum))
	}
	files := snapshots(t, dir)
	var polls, notFound int
	for name, data := range files {
		rec := readRecord(t, data)
		e, _ := rec["endpoint"].(string)
		if _, _, ok := provider.SplitExchangeEndpoint(provider.Endpoint(e)); !ok {
			continue
		}
		resp := rec["response"].(map[string]any)
		for _, k := range []string{"content", "tokens_used", "finish_reason"} {
			if _, ok := resp[k]; ok {
				t.Errorf("%s: an exchange has no %s", name, k)
			}
		}
		if strings.HasPrefix(e, "GET /v1/responses/resp_unknown") {
			notFound++
			if q := rec["request"].(map[string]any)["query"]; q == nil {
				t.Errorf("%s: the query is kept: %v", name, rec["request"])
			}
		} else if strings.HasPrefix(e, "GET /v1/responses/") {
			polls++
		}
	}
	if polls != 4 || notFound != 1 || len(files) != 8 {
		t.Fatalf("stored %d polls and %d 404s, want 4 and 1: %v", polls, notFound, fileNames(files))
	}

	// Offline replay: the fake is stopped; the same calls get the same
	// answers in the same order, and a fifth poll gets the last one again.
	fake.Close()
	set := verifySet(t, dir)
	rs := verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, verify.Refuse))
	defer srv.Close()
	got := app(srv.URL)
	if r := call(t, "GET", srv.URL+"/v1/responses/"+backgroundID, nil, nil); jsonObject(t, r.body)["status"] != "completed" {
		t.Errorf("a fifth poll: %s", r.body)
	}
	want := recorded
	for i := range want {
		if i >= len(got) || !sameJSONText(got[i], want[i]) {
			t.Errorf("replay %d:\n got %v\nwant %v", i, got, want)
			break
		}
	}
	rep := rs.Finish()
	if len(rep.Misses) != 0 || rep.Exchanges != 9 || rep.Served != 9 {
		t.Errorf("replay report: %d misses, %d served, %d exchanges", len(rep.Misses), rep.Served, rep.Exchanges)
	}
}

// sameJSONText compares "[content-type ]body" strings, JSON bodies by
// meaning (replay sends a JSON body in its canonical form).
func sameJSONText(a, b string) bool {
	if a == b {
		return true
	}
	ca, ba := splitBody(a)
	cb, bb := splitBody(b)
	var va, vb any
	if ca != cb || json.Unmarshal([]byte(ba), &va) != nil || json.Unmarshal([]byte(bb), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func splitBody(s string) (contentType, body string) {
	if strings.HasPrefix(s, "{") {
		return "", s
	}
	ct, body, _ := strings.Cut(s, " ")
	return ct, body
}

func fileNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// record --only-missing answers recorded exchanges from the set, polls in
// turn, without reaching the upstream.
func TestExchangesOnlyMissing(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := t.TempDir()
	app := func(p *proxy) []string {
		var seen []string
		r := call(t, "POST", p.srv.URL+"/v1/responses", []byte(`{"model":"gpt-4.1-mini","input":"Later please","background":true,"temperature":0,"max_output_tokens":64}`), nil)
		id, _ := jsonObject(t, r.body)["id"].(string)
		for i := 0; i < 3; i++ {
			r = call(t, "GET", p.srv.URL+"/v1/responses/"+id, nil, nil)
			seen = append(seen, jsonObject(t, r.body)["status"].(string))
		}
		return seen
	}
	p := newProxy(t, dir, fake, nil)
	first := app(p)
	if s := p.finish(); s.Failed() || s.Recorded != 4 {
		t.Fatalf("record:\n%s", summaryText(s))
	}
	fake.Close()
	p = newProxy(t, dir, fake, func(c *record.Config) { c.OnlyMissing = replay.NewResponder(dir) })
	again := app(p)
	s := p.finish()
	if strings.Join(again, ",") != strings.Join(first, ",") || s.Served != 4 || s.Failed() {
		t.Fatalf("--only-missing: %v (recorded %v):\n%s", again, first, summaryText(s))
	}
}
