package harness

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/bedrock"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
)

// TestSignedBedrockCalls: the fake Bedrock of the record rows accepts the
// harness's Bedrock calls, plain and streamed, signed for its host, and
// refuses them unsigned or signed for another host — so a call through
// record reaches it only if record signed it again.
func TestSignedBedrockCalls(t *testing.T) {
	fake := httptest.NewServer(FakeBedrock())
	defer fake.Close()
	host := strings.TrimPrefix(fake.URL, "http://")
	call := func(raw []byte) error {
		_, _, err := Sequential(host, 1, func(int) []byte { return raw })
		return err
	}
	for _, stream := range []bool{false, true} {
		if err := call(KindRaw(host, gen.Bedrock, 7, stream, SourceHeader)); err != nil {
			t.Errorf("stream=%v: signed call refused: %v", stream, err)
		}
	}
	if err := call(RawRequest(host, gen.Bedrock.HTTPRequest(7, false), nil)); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("unsigned call: %v, want HTTP 403", err)
	}
	other, err := SignSigV4("127.0.0.1:1", gen.Bedrock.HTTPRequest(7, false), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := call(RawRequest(host, other, nil)); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("call signed for another host: %v, want HTTP 403", err)
	}
}

// TestBedrockRecordSignsAgain: record, holding the credentials of
// recordAWSEnv, signs the client's Bedrock calls again for the fake, which
// answers them all; one snapshot file per call, as the record rows count.
func TestBedrockRecordSignsAgain(t *testing.T) {
	for _, kv := range recordAWSEnv() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	fake := httptest.NewServer(FakeBedrock())
	defer fake.Close()
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	rec, err := record.New(record.Config{Dir: dir, Display: ".ai-snapshots", ManifestInterval: -1,
		Upstreams: map[provider.Name]string{bedrock.Name: fake.URL}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	defer srv.Close()
	const n = 3
	lat, err := Latency(strings.TrimPrefix(fake.URL, "http://"), strings.TrimPrefix(srv.URL, "http://"), gen.Bedrock, n, 1, baseLatency, false)
	if err != nil || lat.ProxyP50 <= 0 {
		t.Fatalf("Latency = %+v, %v", lat, err)
	}
	srv.Close()
	if sum := rec.Finish(); sum.Failed() {
		t.Fatalf("record failed: %+v", sum)
	}
	if got := countFiles(dir); got != n {
		t.Errorf("%d snapshot files for %d calls through record", got, n)
	}
}

// TestBedrockRecordTargets: the Bedrock record run gets its own latency
// and calls/s targets, missed when a file is missing, and its own table.
func TestBedrockRecordTargets(t *testing.T) {
	run := func(files int) *RecordResult {
		return &RecordResult{DirectP50: time.Millisecond, ProxyP50: 1300 * time.Microsecond,
			Throughput: LoadResult{RPS: 1500, Answered: 7000}, FilesWritten: files, LatencyFiles: 400, LatencyCalls: 400}
	}
	main := run(7000)
	main.Bedrock = run(6999)
	res := &Results{Config: Config{Conns: 32}, Record: main}
	met := map[string]bool{}
	for _, tg := range res.Targets() {
		met[tg.Name] = tg.Met
	}
	for name, want := range map[string]bool{
		"record calls/s at 32 clients (distinct calls; files written = calls answered)":                                         true,
		"record, Bedrock Converse signed again (SigV4), calls/s at 32 clients (distinct calls; files written = calls answered)": false,
		"record, Bedrock Converse signed again (SigV4), added p50 latency (1 client; files written = calls answered)":           true,
		"record added p50 latency (1 client; files written = calls answered)":                                                   true,
		"record added first-byte delay (upstream waits 200 ms)":                                                                 true,
	} {
		if got, ok := met[name]; !ok || got != want {
			t.Errorf("target %q: present %v, met %v; want met %v (targets %v)", name, ok, got, want, met)
		}
	}
	md := res.Markdown()
	if !strings.Contains(md, "### Record overhead, Amazon Bedrock Converse") || strings.Count(md, "| p50 latency (1 client) | 1.000 ms | 1.300 ms | 0.300 ms |") != 2 {
		t.Errorf("report lacks the Bedrock record table:\n%s", md)
	}
}
