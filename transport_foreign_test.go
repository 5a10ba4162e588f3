package traceforge_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// The Go transport sends each call to the URL the client asked for. When
// that URL is a known provider host of another cloud than the credential a
// request carries (an AWS SigV4 signature aimed at api.openai.com), the call
// is refused with 404 and nothing is dialled — the Upstream transport here
// connects every host to a sink that counts connections. The same signed
// call aimed at Bedrock's own host is sent.
func TestTransportNeverSendsForeignCredential(t *testing.T) {
	sink := snapshottest.StartSink()
	defer sink.Close()
	addr := strings.TrimPrefix(sink.URL, "http://")
	up := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	tr, err := traceforge.NewTransport(traceforge.Options{Mode: traceforge.Record, Dir: dir, Upstream: up})
	if err != nil {
		t.Fatal(err)
	}
	const sig = "AWS4-HMAC-SHA256 Credential=AKIASYNTHFOREIGN0001/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=SYNTHSIG"
	send := func(url string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"messages":[]}`))
		req.Header.Set("Authorization", sig)
		resp, err := tr.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := send("http://api.openai.com/guardrail/gr-1/version/1/apply")
	if status != http.StatusNotFound || !strings.Contains(body, "AWS SigV4 signature") || strings.Contains(body, "SYNTH") {
		t.Errorf("to api.openai.com: status %d, body %s", status, body)
	}
	if n := sink.Conns(); n != 0 {
		t.Fatalf("a SigV4-signed call for api.openai.com was dialled (%d connection(s))", n)
	}
	if status, _ := send("http://bedrock-runtime.us-east-1.amazonaws.com/guardrail/gr-1/version/1/apply"); status != http.StatusOK || len(sink.Requests()) != 1 {
		t.Errorf("to Bedrock's own host: status %d, sink requests %d; want it sent", status, len(sink.Requests()))
	}
	err = tr.Close()
	if !errors.Is(err, traceforge.ErrNotSnapshotted) || !strings.Contains(err.Error(), "AWS SigV4 signature") || strings.Contains(err.Error(), "SYNTH") {
		t.Errorf("Close = %v, want ErrNotSnapshotted naming the credential kind only", err)
	}
}
