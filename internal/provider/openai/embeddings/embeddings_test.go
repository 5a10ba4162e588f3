package embeddings_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/openai/embeddings"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// The testdata answers were written by the fake upstream
// (internal/fakeupstream): float vectors for two inputs, and one base64
// vector.
func body(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := provider.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFieldsAndRecord: tokens_used from usage, the served model, no text;
// the stored response has latency_ms, tokens_used, usage, model and body,
// and no content or finish_reason; vectors survive a write and read
// byte for byte (base64 strings and float digits alike).
func TestFieldsAndRecord(t *testing.T) {
	f := embeddings.New()
	for _, name := range []string{"float", "base64"} {
		b := body(t, name)
		fields, err := f.Fields(b)
		if err != nil {
			t.Fatal(err)
		}
		if !fields.NoText || fields.TokensUsed <= 0 || fields.Model != "text-embedding-3-small" || fields.Content != "" || fields.FinishReason != "" {
			t.Errorf("%s: fields %+v", name, fields)
		}
		rec, err := snapshot.NewRecord("0123456789ab0123456789ab0123456789ab0123456789ab0123456789abcdef", string(embeddings.Endpoint), nil,
			time.Date(2026, 1, 9, 10, 30, 0, 0, time.UTC), source.Source{File: "rag.py", Line: 3, Function: "embed"},
			map[string]any{"model": "text-embedding-3-small", "input": "x"}, nil,
			snapshot.Response{Fields: fields, LatencyMS: 5, Body: b})
		if err != nil {
			t.Fatal(err)
		}
		resp := rec["response"].(map[string]any)
		for _, absent := range []string{"content", "finish_reason", "tool_calls", "stream"} {
			if _, ok := resp[absent]; ok {
				t.Errorf("%s: response has %s", name, absent)
			}
		}
		for _, present := range []string{"tokens_used", "latency_ms", "usage", "model", "body"} {
			if _, ok := resp[present]; !ok {
				t.Errorf("%s: response lacks %s", name, present)
			}
		}
		doc, _ := snapshot.FileDocument(rec)
		data, err := snapshot.MarshalFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := snapshot.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got := back.(map[string]any)["snapshots"].([]any)[0].(map[string]any)["response"].(map[string]any)["body"]
		want, _ := snapshot.Canonical(b)
		have, _ := snapshot.Canonical(got)
		if !bytes.Equal(want, have) {
			t.Errorf("%s: the stored body differs from the answer", name)
		}
		r := snapshot.RecordFromValue("openai", back.(map[string]any)["snapshots"].([]any)[0].(map[string]any))
		if !r.Response.NoText || r.Response.NoTokens {
			t.Errorf("%s: read back NoText=%v NoTokens=%v", name, r.Response.NoText, r.Response.NoTokens)
		}
	}
	if v := body(t, "base64")["data"].([]any)[0].(map[string]any)["embedding"]; v != "U36dviGx5T2dfKI+Jni+vvI06zyzFug+PmApP9Mbyb0=" {
		t.Errorf("base64 vector %v", v)
	}
}

func TestRefusals(t *testing.T) {
	f := embeddings.New()
	noUsage := body(t, "float")
	delete(noUsage, "usage")
	if _, err := f.Fields(noUsage); !errors.Is(err, provider.ErrNoUsage) {
		t.Errorf("no usage: %v", err)
	}
	noData := body(t, "float")
	noData["data"] = "x"
	if _, err := f.Fields(noData); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("no data: %v", err)
	}
	if f.Streams("/v1/embeddings", map[string]any{"stream": true}) {
		t.Error("embeddings never stream")
	}
	var out bytes.Buffer
	if err := f.SynthesizeStream(body(t, "float"), false, &out, nil); !errors.Is(err, provider.ErrMalformed) || out.Len() != 0 {
		t.Errorf("SynthesizeStream: %v", err)
	}
	if _, err := f.NewAssembler().Write([]byte("data: {}\n\n")); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("assembler: %v", err)
	}
	if temp, seed := f.Determinism(); temp != "" || seed != "" {
		t.Error("embeddings have no sampling to pin")
	}
	req := map[string]any{"model": "m", "input": "x", "user": nil, "dimensions": 8}
	f.NormalizeStored(req)
	if _, ok := req["user"]; ok || len(f.KeyRequest(req, nil)) != 3 {
		t.Errorf("normalized %v", req)
	}
	for path, want := range map[string]bool{"/v1/embeddings": true, "/openai/deployments/x/embeddings": true, "/v1/embeddings/x": false} {
		if _, ok := f.Route("POST", path); ok != want {
			t.Errorf("Route(%s) = %v", path, ok)
		}
	}
}
