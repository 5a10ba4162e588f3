package record_test

import (
	"bytes"
	"context"
	"github.com/traceforge/traceforge/internal/provider"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// The secret parts of the credentials below: none may appear in a reply,
// the summary or the log.
const (
	awsKeyID        = "AKIAFOREIGNKEY000001"
	awsSig          = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
	awsSession      = "IQoJb3JpZ2luX2VjEFOREIGNSESSION"
	googleTok       = "ya29.a0AfForeignOAuthToken"
	googleKey       = "AIzaSyForeignGoogleApiKey0000000000000"
	foreignAzureKey = "0123456789abcdefazureforeignkey0"
	bedrockKey      = "ABSKQmVkcm9ja0FQSUtleS1mb3JlaWdu"
)

// foreignCase is one request carrying another provider's credential.
type foreignCase struct {
	name, method, path string
	header             map[string]string
	kind               string // the kind the reply and the summary name
	// served: the route is one a format serves (an Azure deployment path
	// ends in /chat/completions): refused only when its upstream is a
	// known host of another cloud, not a gateway the user configured.
	served bool
}

func foreignCases() []foreignCase {
	sigv4 := "AWS4-HMAC-SHA256 Credential=" + awsKeyID + "/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + awsSig
	return []foreignCase{
		// Bedrock routes traceforge does not serve (ApplyGuardrail,
		// StartAsyncInvoke): Converse is served, and re-signed.
		{"sigv4", "POST", "/guardrail/gr-1/version/1/apply",
			map[string]string{"Authorization": sigv4, "X-Amz-Date": "20261128T170000Z"}, "AWS SigV4 signature", false},
		{"amz-security-token", "POST", "/model/meta.llama3-8b-instruct-v1:0/invoke",
			map[string]string{"Authorization": "", "X-Amz-Security-Token": awsSession}, "AWS session token", false},
		{"presigned", "GET", "/model/x/invoke?X-Amz-Credential=" + awsKeyID + "&X-Amz-Signature=" + awsSig,
			map[string]string{"Authorization": ""}, "AWS presigned signature", false},
		{"bedrock-api-key", "POST", "/async-invoke",
			map[string]string{"Authorization": "Bearer " + bedrockKey}, "Amazon Bedrock API key", false},
		// A Vertex AI route is served (the token goes to the Vertex AI
		// upstream): an unserved route that goes to OpenAI.
		{"google-oauth", "POST", "/v1/models/list",
			map[string]string{"Authorization": "Bearer " + googleTok}, "Google OAuth access token", false},
		// x-goog-api-key and key= go to the Gemini upstream on an unknown
		// route, except Ollama's /api/ routes.
		{"x-goog-api-key", "POST", "/api/show",
			map[string]string{"Authorization": "", "x-goog-api-key": googleKey}, "Google API key (x-goog-api-key)", false},
		{"key-query", "GET", "/api/tags?key=" + googleKey,
			map[string]string{"Authorization": ""}, "Google API key (key= query parameter)", false},
		// An AzureOpenAI client that took OPENAI_BASE_URL as its base URL
		// (…/v1/deployments/…, an OpenAI route); Azure's own routes go to
		// the Azure upstream.
		{"azure-api-key", "POST", "/v1/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
			map[string]string{"Authorization": "", "api-key": foreignAzureKey}, "Azure OpenAI key (api-key)", true},
	}
}

func foreignSecrets() []string {
	return []string{awsKeyID, awsSig, awsSession, googleTok, googleKey, foreignAzureKey, bedrockKey}
}

func doRaw(t *testing.T, method, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Traceforge-Source", srcHeader)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestForeignCredentialsNeverForwarded: a request carrying a credential of
// another provider than the upstream it would go to is refused with 404,
// naming the credential's kind (never its value) and the served routes;
// every upstream is a sink that must see no connection at all; the run
// lists the call and fails.
func TestForeignCredentialsNeverForwarded(t *testing.T) {
	for _, tc := range foreignCases() {
		for _, public := range []bool{false, true} {
			if tc.served && !public {
				continue
			}
			name := tc.name + "/loopback-upstreams"
			if public {
				name = tc.name + "/default-upstreams"
			}
			t.Run(name, func(t *testing.T) { testForeign(t, tc, public) })
		}
	}
}

// testForeign sends tc through a recorder whose upstreams are the sink
// itself (public false) or the providers' default public hosts, dialled
// to the sink (public true).
func testForeign(t *testing.T, tc foreignCase, public bool) {
	sink := snapshottest.StartSink()
	defer sink.Close()
	log := &syncBuffer{}
	cfg := record.Config{
		Dir: filepath.Join(t.TempDir(), ".ai-snapshots"), Display: ".ai-snapshots",
		Upstreams: map[provider.Name]string{provider.OpenAI: sink.URL + "/v1", provider.Anthropic: sink.URL,
			provider.Gemini: sink.URL, provider.Ollama: sink.URL},
		Log: log, ManifestInterval: -1,
	}
	if public {
		cfg.Upstreams = map[provider.Name]string{provider.OpenAI: "http://api.openai.com/v1", provider.Anthropic: "http://api.anthropic.com",
			provider.Gemini: "http://generativelanguage.googleapis.com", provider.Ollama: sink.URL}
		cfg.Transport = dialTo(sink.URL)
	}
	rec, err := record.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(t, rec)
	status, body := doRaw(t, tc.method, srv+tc.path, tc.header)
	s := rec.Finish()
	if status != http.StatusNotFound {
		t.Errorf("status %d, want 404: %s", status, body)
	}
	if n := sink.Conns(); n != 0 {
		t.Fatalf("the upstream sink got %d connection(s): a foreign credential left traceforge", n)
	}
	text := summaryText(s)
	for _, want := range []string{tc.kind, "nothing was sent"} {
		if !strings.Contains(body, want) || !strings.Contains(text, want) {
			t.Errorf("reply or summary does not say %q:\nreply: %s\nsummary: %s", want, body, text)
		}
	}
	if !strings.Contains(body, "…/v1/chat/completions") {
		t.Errorf("the reply does not list the served routes: %s", body)
	}
	if !s.Failed() || !hasKind(s, record.KindForeignCredential) {
		t.Errorf("the run does not fail with a foreign-credential problem:\n%s", text)
	}
	for _, secret := range foreignSecrets() {
		for where, got := range map[string]string{"reply": body, "summary": text, "log": log.String()} {
			if strings.Contains(got, secret) {
				t.Errorf("the %s holds a credential value %q", where, secret)
			}
		}
	}
}

// TestOwnCredentialsStillForwarded: an unserved route carrying the matching
// provider's own credential keeps today's forwarding (listed, not
// snapshotted); so does a Google key to the Gemini upstream and an Azure
// key to an OpenAI upstream the user pointed at an Azure host.
func TestOwnCredentialsStillForwarded(t *testing.T) {
	cases := []struct {
		name, method, path string
		header             map[string]string
		azure              bool
	}{
		{"openai-models", "GET", "/v1/models", map[string]string{"Authorization": "Bearer sk-own-openai-key"}, false},
		{"gemini-key-to-gemini", "POST", "/v1beta/cachedContents", map[string]string{"Authorization": "", "x-goog-api-key": googleKey}, false},
		{"google-oauth-to-gemini", "GET", "/v1beta/models", map[string]string{"Authorization": "Bearer " + googleTok}, false},
		{"azure-key-to-azure-host", "POST", "/v1/files", map[string]string{"Authorization": "", "api-key": foreignAzureKey}, true},
		// On a served route the provider is known and its upstream is the
		// one the user configured: the app's credential goes there.
		{"served-route", "POST", "/api/chat", map[string]string{"Authorization": "", "x-goog-api-key": googleKey}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := snapshottest.StartSink()
			defer sink.Close()
			cfg := record.Config{
				Dir: filepath.Join(t.TempDir(), ".ai-snapshots"), Display: ".ai-snapshots",
				Upstreams: map[provider.Name]string{provider.OpenAI: sink.URL + "/v1", provider.Anthropic: sink.URL,
					provider.Gemini: sink.URL, provider.Ollama: sink.URL},
				Log: &syncBuffer{}, ManifestInterval: -1,
			}
			if tc.azure {
				// The request goes to the Azure host (resolved to the sink).
				cfg.Transport = dialTo(sink.URL)
				cfg.Upstreams[provider.OpenAI] = "http://myres.openai.azure.com/openai/v1"
			}
			rec, err := record.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			srv := httpServer(t, rec)
			status, body := doRaw(t, tc.method, srv+tc.path, tc.header)
			s := rec.Finish()
			if status != http.StatusOK || len(sink.Requests()) != 1 {
				t.Fatalf("status %d (%s), sink requests %d: want the call forwarded", status, body, len(sink.Requests()))
			}
			if hasKind(s, record.KindForeignCredential) {
				t.Errorf("own credential refused:\n%s", summaryText(s))
			}
		})
	}
}

func httpServer(t *testing.T, rec *record.Recorder) string {
	t.Helper()
	srv := httptest.NewServer(serve.Guard(rec.Handler(), nil, record.Refuse))
	t.Cleanup(srv.Close)
	return srv.URL
}

// dialTo is a transport that connects every request to the server at url,
// whatever host it names.
func dialTo(url string) http.RoundTripper {
	addr := strings.TrimPrefix(url, "http://")
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
}
