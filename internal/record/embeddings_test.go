package record_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
)

// TestEmbeddingsRecordAndServe: float and base64 embeddings calls become
// snapshots (endpoint /v1/embeddings, tokens_used, no content or
// finish_reason); with the upstream failing, --only-missing serves them with
// the same vectors, the base64 string unchanged.
func TestEmbeddingsRecordAndServe(t *testing.T) {
	fake := startFake(t, fakeupstream.Options{})
	dir := t.TempDir() + "/.ai-snapshots"
	p := newProxy(t, dir, fake, nil)
	reqs := []map[string]any{
		{"model": "text-embedding-3-small", "input": []any{"traceforge records LLM calls", "and replays them"}},
		{"model": "text-embedding-3-small", "input": "traceforge records LLM calls", "encoding_format": "base64", "dimensions": 8},
	}
	var first []map[string]any
	for _, req := range reqs {
		r := p.do("/v1/embeddings", req, nil)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		first = append(first, jsonObject(t, r.body))
	}
	if s := p.finish(); s.Failed() {
		t.Fatalf("record failed:\n%s", summaryText(s))
	}
	verifySet(t, dir)
	snaps := snapshots(t, dir)
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for rel, data := range snaps {
		rec := readRecord(t, data)
		resp := rec["response"].(map[string]any)
		_, content := resp["content"]
		_, finish := resp["finish_reason"]
		if rec["endpoint"] != "/v1/embeddings" || content || finish || resp["tokens_used"] == nil || resp["body"] == nil {
			t.Errorf("%s: %v", rel, resp)
		}
	}

	fake.SetOptions(fakeupstream.Options{FailStatus: 500})
	p2 := newProxy(t, dir, fake, func(c *record.Config) { c.OnlyMissing = replay.NewResponder(dir) })
	for i, req := range reqs {
		r := p2.do("/v1/embeddings", req, nil)
		if r.status != 200 {
			t.Fatalf("served: %d %s", r.status, r.body)
		}
		got := jsonObject(t, r.body)
		if !reflect.DeepEqual(got["data"], first[i]["data"]) {
			a, _ := json.Marshal(got["data"])
			b, _ := json.Marshal(first[i]["data"])
			t.Errorf("call %d: served vectors differ:\n%s\n%s", i, a, b)
		}
	}
	if s := p2.finish(); s.Failed() {
		t.Fatalf("only-missing failed:\n%s", summaryText(s))
	}
}
