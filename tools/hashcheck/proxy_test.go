package hashcheck_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
)

// recordingProxy is a recorder in front of the fake upstream, writing into
// dir, for tests that record calls and then check the folder in Node.
type recordingProxy struct {
	t   *testing.T
	dir string
	srv *httptest.Server
	rec *record.Recorder
}

// startRecording starts the fake upstream and a recorder whose config
// configure fills in from the fake's URL (upstreams, named upstreams).
func startRecording(t *testing.T, configure func(fakeURL string, cfg *record.Config)) *recordingProxy {
	t.Helper()
	fake := httptest.NewServer(fakeupstream.New(fakeupstream.Options{}))
	t.Cleanup(fake.Close)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	cfg := record.Config{Dir: dir, Display: ".ai-snapshots", ManifestInterval: -1}
	configure(fake.URL, &cfg)
	rec, err := record.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	t.Cleanup(srv.Close)
	return &recordingProxy{t: t, dir: dir, srv: srv, rec: rec}
}

// send makes one call attributed to app.py:7:main, with hdr as name, value
// pairs, and returns the answer's status and body.
func (p *recordingProxy) send(method, path, body string, hdr ...string) (int, []byte) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.srv.URL+path, bytes.NewReader([]byte(body)))
	req.Header.Set("X-Traceforge-Source", "app.py:7:main")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
