package check

import (
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	pv "github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// nativeDoc builds a checked-shape file of a Gemini or Ollama record.
func nativeDoc(t *testing.T, p, e, request string, resp snapshot.Response) (string, map[string]any) {
	t.Helper()
	req, err := pv.Decode([]byte(request))
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := registry.NewRecord(p, pv.Endpoint(e), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		source.Source{File: "app/main.go", Line: 3, Function: "ask"}, req, nil, resp, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := snapshot.FileDocument(rec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := snapshot.Decode(mustCanonical(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	return p + "/" + rec["id"].(string) + ".json", v.(map[string]any)
}

func mustCanonical(t *testing.T, v any) []byte {
	t.Helper()
	b, err := snapshot.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var generation = snapshot.Response{Fields: snapshot.Fields{Content: "hi", TokensUsed: 5, FinishReason: "STOP"}, LatencyMS: 3}

// TestNativeRecordsChecked: Gemini and Ollama records are validated against
// their endpoint's schema, and the determinism policy reads their nested
// temperature and seed (DESIGN §12.2); embeddings have no policy.
func TestNativeRecordsChecked(t *testing.T) {
	const gem = "/v1beta/models/gemini-2.5-flash:generateContent"
	cases := []struct {
		name, p, e, req string
		resp            snapshot.Response
		want            []string // pointer suffix + rule of every error finding
	}{
		{"gemini ok", "gemini", gem, `{"model":"gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"seed":1,"maxOutputTokens":8}}`, generation, nil},
		{"gemini hot", "gemini", gem, `{"model":"gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0.7,"seed":1,"maxOutputTokens":8}}`, generation,
			[]string{"/request/generationConfig/temperature determinism"}},
		{"gemini no seed", "gemini", gem, `{"model":"gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"maxOutputTokens":8}}`, generation,
			[]string{"/request/generationConfig/seed determinism"}},
		{"gemini no max tokens", "gemini", gem, `{"model":"gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"seed":1}}`, generation,
			[]string{"/request/generationConfig/maxOutputTokens schema"}},
		{"gemini two candidates", "gemini", gem, `{"model":"gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"seed":1,"maxOutputTokens":8,"candidateCount":2}}`, generation,
			[]string{"/request/generationConfig/candidateCount schema"}},
		{"gemini embeddings", "gemini", "/v1/models/gemini-embedding-001:batchEmbedContents", `{"model":"gemini-embedding-001","requests":[{"content":{"parts":[{"text":"a"}]}}]}`,
			snapshot.Response{Fields: snapshot.Fields{NoText: true, NoTokens: true}, LatencyMS: 2, Body: map[string]any{"embeddings": []any{}}}, nil},
		{"ollama ok", "ollama", "/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"options":{"temperature":0,"seed":1,"num_predict":8}}`, generation, nil},
		{"ollama hot, no seed", "ollama", "/api/generate", `{"model":"llama3.2","prompt":"hi","options":{"temperature":1,"num_predict":8}}`, generation,
			[]string{"/request/options/temperature determinism", "/request/options/seed determinism"}},
		{"ollama no options", "ollama", "/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`, generation,
			[]string{"/request/options schema"}},
		{"ollama embed", "ollama", "/api/embed", `{"model":"nomic-embed-text","input":["a","b"]}`,
			snapshot.Response{Fields: snapshot.Fields{NoText: true, TokensUsed: 2}, LatencyMS: 2, Body: map[string]any{"embeddings": []any{}}}, nil},
		{"embed response with content", "ollama", "/api/embed", `{"model":"nomic-embed-text","input":"a"}`,
			snapshot.Response{Fields: snapshot.Fields{TokensUsed: 2, FinishReason: "stop"}, LatencyMS: 2, Body: map[string]any{}},
			[]string{"/response/content schema", "/response/finish_reason schema"}},
	}
	for _, tc := range cases {
		file, doc := nativeDoc(t, tc.p, tc.e, tc.req, tc.resp)
		_, fs := CheckDocument(file, tc.p, doc, Options{})
		var got []string
		for _, f := range fs {
			if f.Severity == finding.Error {
				got = append(got, strings.TrimPrefix(f.Pointer, "/snapshots/0")+" "+f.Rule)
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: findings %q, want %q\n%v", tc.name, got, tc.want, fs)
		}
	}
}
