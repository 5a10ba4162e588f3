package hashcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// TestNodeAgreesOnExchanges: exchange records (format 1.2.0: endpoint
// "METHOD /route", the request as sent, a status; polls as occurrences,
// keyed sha256(JCS({key, occurrence}))) recorded through the proxy hash
// the same in Node; an occurrence changed and resealed is caught.
func TestNodeAgreesOnExchanges(t *testing.T) {
	t.Parallel()
	node(t)
	p := startRecording(t, func(fake string, cfg *record.Config) {
		cfg.Upstreams = map[provider.Name]string{provider.OpenAI: fake + "/v1", provider.Anthropic: fake}
	})
	dir, srv, rec := p.dir, p.srv, p.rec
	do := func(method, path, body string, hdr ...string) []byte {
		t.Helper()
		_, b := p.send(method, path, body, append([]string{"Authorization", "Bearer sk-test"}, hdr...)...)
		return b
	}
	do("POST", "/v1/responses/input_tokens", `{"model":"gpt-4.1-mini","input":"count me"}`)
	do("POST", "/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`, "x-api-key", "k", "anthropic-version", "2023-06-01")
	var created struct{ ID string }
	_ = json.Unmarshal(do("POST", "/v1/responses", `{"model":"gpt-4.1-mini","input":"later","background":true,"temperature":0,"max_output_tokens":16}`), &created)
	for i := 0; i < 3; i++ {
		do("GET", "/v1/responses/"+created.ID+"?include[]=usage", "")
	}
	// A multipart upload: keyed with its random boundary written as
	// provider.KeyBoundary, in Node too.
	const boundary = "----formdata-undici-042424242424"
	upload := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nuser_data\r\n--" + boundary +
		"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nnotes\r\n--" + boundary + "--\r\n"
	do("POST", "/v1/files", upload, "Content-Type", "multipart/form-data; boundary="+boundary)
	srv.Close()
	if s := rec.Finish(); s.Failed() || s.Exchanges != 7 {
		t.Fatalf("record: %d exchanges, failed %v: %v", s.Exchanges, s.Failed(), s.Problems)
	}
	mustAgree(t, dir)

	// The third poll claims to be the second: its id no longer follows.
	files, _ := filepath.Glob(filepath.Join(dir, "openai", "*.json"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		v, _ := snapshot.Decode(data)
		doc := v.(map[string]any)
		r := doc["snapshots"].([]any)[0].(map[string]any)
		if n, _ := snapshot.Int64(r["occurrence"]); n != 2 {
			continue
		}
		r["occurrence"] = int64(1)
		if err := snapshot.Rehash(r); err != nil {
			t.Fatal(err)
		}
		doc["hash"], _ = snapshot.FileHash(snapshot.Version, []string{r["hash"].(string)})
		out, _ := snapshot.MarshalFile(doc)
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		mustDisagree(t, dir, "openai/"+filepath.Base(f)+": id (from the request key)")
		return
	}
	t.Fatal("no record with occurrence 2")
}
