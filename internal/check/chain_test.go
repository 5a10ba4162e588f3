package check

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestChainFindings: a chained Responses record whose parent is missing is
// a note; a parent whose recorded id differs from previous_response_id is a
// note; a turn that is not the parent's + 1 is an error.
func TestChainFindings(t *testing.T) {
	snap := func(rel, id, respID, chainedFrom, parent string, turn int) *Snapshot {
		// A lean snapshot (Options.Slim): no record, only what chains need.
		return &Snapshot{Rel: rel, ID: id, ParentID: parent, Turn: turn, ResponseID: respID, ChainedFrom: chainedFrom}
	}
	root := snap("openai/aaaaaaaaaaaa.json", "aaaaaaaaaaaa", "resp_1", "", "", 0)
	cases := []struct {
		name  string
		child *Snapshot
		sev   finding.Severity
		want  string
	}{
		{"consistent", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_1", "aaaaaaaaaaaa", 2), finding.Note, ""},
		{"missing parent", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_1", "cccccccccccc", 2), finding.Note, "is not in the set"},
		{"other id", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_9", "aaaaaaaaaaaa", 2), finding.Note, "is not the id resp_1"},
		{"wrong turn", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_1", "aaaaaaaaaaaa", 3), finding.Error, "lineage turn is 3"},
	}
	for _, c := range cases {
		fs := chainFindings([]*Snapshot{root, c.child})
		if c.want == "" {
			if len(fs) != 0 {
				t.Errorf("%s: %v", c.name, fs)
			}
			continue
		}
		if len(fs) != 1 || fs[0].Severity != c.sev || !strings.Contains(fs[0].Message, c.want) || fs[0].File != c.child.Rel {
			t.Errorf("%s: %v", c.name, fs)
		}
	}
}

func responsesItem(temp any) snapshottest.Item {
	it := snapshottest.OpenAIChat("hi")
	it.Endpoint = "/v1/responses"
	it.Request = map[string]any{"model": "gpt-4.1-mini", "input": "hi", "temperature": temp, "max_output_tokens": 64}
	it.Response.FinishReason = "completed"
	return it
}

// TestPolicyPerEndpoint: Responses snapshots need temperature 0 but no seed
// (the API has none), reasoning models pass through a per-model exception;
// embeddings have no sampling, so no policy applies; chat still needs a seed.
func TestPolicyPerEndpoint(t *testing.T) {
	if fs := checkItem(t, responsesItem(0), nil); fs.Errors() != 0 {
		t.Fatalf("a Responses snapshot needs no seed: %v", fs)
	}
	fs := checkItem(t, responsesItem(0.7), nil)
	if fs.Errors() != 1 || fs[0].Pointer != "/snapshots/0/request/temperature" || strings.Contains(fs[0].Fix, "seed") {
		t.Fatalf("temperature 0.7: %v", fs)
	}
	reasoning := responsesItem(1)
	reasoning.Request["model"] = "o4-mini"
	cfg := &Config{Exceptions: []Exception{{Model: "o4*", Relax: []string{"temperature"}}}}
	if fs := checkItem(t, reasoning, cfg); fs.Errors() != 0 || len(fs) != 1 || !strings.Contains(fs[0].Message, "nondeterministic by policy") {
		t.Fatalf("reasoning model under an exception: %v", fs)
	}
	emb := snapshottest.OpenAIChat("e")
	emb.Endpoint = "/v1/embeddings"
	emb.Request = map[string]any{"model": "text-embedding-3-small", "input": "x"}
	emb.Response = snapshot.Response{LatencyMS: 3, Fields: snapshot.Fields{NoText: true, TokensUsed: 1}, Body: map[string]any{"data": []any{}}}
	if fs := checkItem(t, emb, &Config{Exceptions: []Exception{{Model: "*", Relax: []string{"temperature"}}}}); len(fs) != 0 {
		t.Fatalf("embeddings: no policy, no exception note: %v", fs)
	}
	chat := snapshottest.OpenAIChat("hi")
	delete(chat.Request, "seed")
	if fs := checkItem(t, chat, nil); fs.Errors() != 1 || !strings.Contains(fs[0].Message, "OpenAI snapshots need a fixed integer seed") {
		t.Fatalf("chat without seed: %v", fs)
	}
}

// TestSchemaPerEndpoint: a record is validated by its endpoint's schema —
// embeddings refuse content, Responses needs max_output_tokens — and an
// endpoint no format owns is named.
func TestSchemaPerEndpoint(t *testing.T) {
	noMax := responsesItem(0)
	delete(noMax.Request, "max_output_tokens")
	if fs := checkItem(t, noMax, nil); fs.Errors() != 1 || fs[0].Pointer != "/snapshots/0/request/max_output_tokens" {
		t.Fatalf("Responses without max_output_tokens: %v", fs)
	}
	emb := snapshottest.OpenAIChat("e")
	emb.Endpoint = "/v1/embeddings"
	emb.Request = map[string]any{"model": "text-embedding-3-small", "input": "x"}
	emb.Response = snapshot.Response{LatencyMS: 3, Fields: snapshot.Fields{Content: "invented", TokensUsed: 1}, Body: map[string]any{"data": []any{}}}
	if fs := checkItem(t, emb, nil); fs.Errors() == 0 || !strings.Contains(joined(fs), "/snapshots/0/response/content") {
		t.Fatalf("embeddings with content: %v", fs)
	}
	// A chat record whose endpoint was changed to one no format owns (and
	// resealed): the finding names the endpoint.
	doc, id, err := snapshottest.Build(snapshottest.OpenAIChat("x"))
	if err != nil {
		t.Fatal(err)
	}
	rec := doc["snapshots"].([]any)[0].(map[string]any)
	rec["endpoint"] = "/v1/images/generations"
	if err := snapshot.Rehash(rec); err != nil {
		t.Fatal(err)
	}
	doc, _ = snapshot.FileDocument(rec)
	data, _ := snapshot.MarshalFile(doc)
	_, fs := CheckBytes(snapshot.RelPath("openai", id), data, Options{Config: &Config{}})
	if fs.Errors() == 0 || !strings.Contains(joined(fs), `endpoint "/v1/images/generations" is not one of the openai endpoints`) {
		t.Fatalf("unknown endpoint: %v", fs)
	}
}

func joined(fs finding.Findings) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Pointer + ": " + f.Message + "\n")
	}
	return b.String()
}
