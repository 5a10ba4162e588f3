package provider_test

import (
	"bytes"
	"net/url"
	"reflect"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

func TestMatchExchange(t *testing.T) {
	routes := []provider.ExchangeRoute{
		{Methods: []string{"GET", "DELETE"}, Path: "/v1/responses/{id}"},
		{Methods: []string{"POST"}, Path: "/v1/responses/input_tokens"},
		{Methods: []string{"POST"}, Path: "/v1beta/models/{model}:countTokens"},
		{Methods: []string{"POST"}, Path: "/v1beta/batches/{id}:cancel"},
	}
	for _, tc := range []struct {
		method, path, want string
	}{
		{"GET", "/v1/responses/resp_1", "/v1/responses/resp_1"},
		{"GET", "/gateway/v1/responses/resp_1", "/v1/responses/resp_1"}, // any base-URL prefix
		{"DELETE", "/v1/responses/resp_1", "/v1/responses/resp_1"},
		{"POST", "/v1/responses/resp_1", ""},
		{"GET", "/v1/responses/", ""},
		{"GET", "/v1/responses/a/b", ""},
		{"POST", "/v1/responses/input_tokens", "/v1/responses/input_tokens"},
		{"POST", "/v1beta/models/gemini-2.0-flash:countTokens", "/v1beta/models/gemini-2.0-flash:countTokens"},
		{"POST", "/v1beta/models/:countTokens", ""},
		{"POST", "/v1beta/models/m:generateContent", ""},
		{"POST", "/v1beta/batches/b1:cancel", "/v1beta/batches/b1:cancel"},
	} {
		got, ok := provider.MatchExchange(routes, tc.method, tc.path)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s %s: %q %v, want %q", tc.method, tc.path, got, ok, tc.want)
		}
	}
}

func TestExchangeRequestDropsCredentials(t *testing.T) {
	q, _ := url.ParseQuery("key=AIzaSECRET&after=file_1&limit=2&limit=3&api-key=x")
	req := provider.ExchangeRequest("GET", "/v1/files", q, nil)
	want := map[string]any{"method": "GET", "path": "/v1/files", "query": map[string]any{"after": []any{"file_1"}, "limit": []any{"2", "3"}}}
	if !reflect.DeepEqual(req, want) {
		t.Fatalf("%v", req)
	}
}

func TestExchangeBodyKinds(t *testing.T) {
	multipart := []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n\x00\x01\xff\r\n--b--\r\n")
	for _, tc := range []struct {
		in   []byte
		kind string
	}{
		{nil, ""},
		{[]byte(`{"model":"m","input":"hi"}`), "body"},
		{[]byte(`[1,2]`), "body"},
		{[]byte(`{"id":12345678901234567890}`), "body_text"}, // beyond 2^53: kept as written
		{[]byte(`{"a":1,"a":2}`), "body_text"},               // not one JSON value snapshots hold
		{[]byte("purpose=assistants"), "body_text"},
		{multipart, "body_b64"},
	} {
		m := provider.ExchangeBody(tc.in)
		if tc.kind == "" {
			if len(m) != 0 {
				t.Errorf("%q: %v", tc.in, m)
			}
			continue
		}
		if _, ok := m[tc.kind]; !ok || len(m) != 1 {
			t.Errorf("%q: %v, want %s", tc.in, m, tc.kind)
		}
	}
}

// FuzzExchangeBody: whatever bytes an exchange carries (multipart uploads,
// binary, text, JSON), the stored form gives them back — exactly for text
// and bytes, as the same JSON value for a JSON body — and survives a
// snapshot file's round trip.
func FuzzExchangeBody(f *testing.F) {
	f.Add([]byte(`{"model":"m","input":"hi"}`))
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jsonl\"\r\nContent-Type: application/octet-stream\r\n\r\n{\"custom_id\":\"1\"}\n\r\n--b--\r\n"))
	f.Add([]byte{0, 1, 2, 0xff, 0xfe})
	f.Add([]byte(`{"n":9007199254740993}`))
	f.Add([]byte(`[{"a":"\ud800"}]`))
	f.Add([]byte(" \n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m := provider.ExchangeBody(in)
		doc := map[string]any{"v": m}
		if err := snapshot.AsDecoded(doc); err != nil {
			t.Fatalf("%q: stored form %v cannot be written: %v", in, m, err)
		}
		data, err := snapshot.Canonical(doc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := snapshot.Decode(data)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		stored := back.(map[string]any)["v"].(map[string]any)
		out, isJSON, err := provider.ExchangeBytes(stored)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !isJSON {
			if !bytes.Equal(out, in) {
				t.Fatalf("%q came back as %q", in, out)
			}
			return
		}
		a, err1 := snapshot.Decode(in)
		b, err2 := snapshot.Decode(out)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q came back as %q (%v, %v)", in, out, err1, err2)
		}
	})
}
