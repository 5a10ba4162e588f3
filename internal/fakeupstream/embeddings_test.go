package fakeupstream

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// floats converts a decoded JSON number array.
func floats(t *testing.T, v any) []float32 {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("not an array: %T", v)
	}
	out := make([]float32, len(a))
	for i, x := range a {
		out[i] = float32(x.(float64))
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestEmbeddingsFloatAndBase64(t *testing.T) {
	s := start(t, Options{})
	resp, b := do(t, s.URL+"/v1/embeddings", `{"model":"text-embedding-3-small","input":["The food was delicious","and the waiter"]}`, openAIAuth)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(string(b), "{\n  \"object\": \"list\",\n  \"data\": [\n    {\n      \"object\": \"embedding\",\n      \"index\": 0,") {
		t.Fatalf("not in the API's member order: %.120s", b)
	}
	m := obj(t, b)
	if get(t, m, "object") != "list" || get(t, m, "model") != "text-embedding-3-small" ||
		get(t, m, "usage", "prompt_tokens") != 7.0 || get(t, m, "usage", "total_tokens") != 7.0 {
		t.Fatalf("%v", m)
	}
	if n := len(get(t, m, "data").([]any)); n != 2 {
		t.Fatalf("%d embeddings", n)
	}
	first := floats(t, get(t, m, "data", 0, "embedding"))
	second := floats(t, get(t, m, "data", 1, "embedding"))
	if len(first) != 1536 || get(t, m, "data", 1, "index") != 1.0 || get(t, m, "data", 0, "object") != "embedding" {
		t.Fatalf("len %d", len(first))
	}
	if math.Abs(norm(first)-1) > 1e-5 || first[0] == second[0] {
		t.Fatalf("norm %v, first values %v %v", norm(first), first[0], second[0])
	}

	// base64: little-endian float32 of the very same vector.
	_, b = do(t, s.URL+"/v1/embeddings", `{"model":"text-embedding-3-small","input":["The food was delicious","and the waiter"],"encoding_format":"base64"}`, openAIAuth)
	raw, err := base64.StdEncoding.DecodeString(get(t, obj(t, b), "data", 0, "embedding").(string))
	if err != nil || len(raw) != 4*1536 {
		t.Fatalf("base64: %v, %d bytes", err, len(raw))
	}
	for i := range first {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != first[i] {
			t.Fatalf("value %d: base64 %v, float %v", i, got, first[i])
		}
	}

	// dimensions: the prefix of the full vector, renormalized.
	_, b = do(t, s.URL+"/v1/embeddings", `{"model":"text-embedding-3-small","input":"The food was delicious","dimensions":8}`, openAIAuth)
	short := floats(t, get(t, obj(t, b), "data", 0, "embedding"))
	n8 := norm(first[:8])
	for i, x := range short {
		if math.Abs(float64(x)-float64(first[i])/n8) > 1e-6 {
			t.Fatalf("dimensions: value %d = %v, want %v", i, x, float64(first[i])/n8)
		}
	}
	// Large model size, token-array input.
	_, b = do(t, s.URL+"/v1/embeddings", `{"model":"text-embedding-3-large","input":[[1,2,3]]}`, openAIAuth)
	lm := obj(t, b)
	if len(get(t, lm, "data", 0, "embedding").([]any)) != 3072 || get(t, lm, "usage", "prompt_tokens") != 3.0 {
		t.Fatal("large model / token input")
	}
}

func TestEmbeddingsDeterministic(t *testing.T) {
	s := start(t, Options{})
	const req = `{"model":"text-embedding-3-small","input":"same"}`
	_, b1 := do(t, s.URL+"/v1/embeddings", req, openAIAuth)
	_, b2 := do(t, s.URL+"/v1/embeddings", req, openAIAuth)
	if string(b1) != string(b2) {
		t.Fatal("same request, different vectors")
	}
	s.SetOptions(Options{Nondeterministic: true})
	_, b3 := do(t, s.URL+"/v1/embeddings", req, openAIAuth)
	if string(b1) == string(b3) {
		t.Fatal("Nondeterministic left the vector unchanged")
	}
}
