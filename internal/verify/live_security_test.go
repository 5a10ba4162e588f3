package verify

import (
	"bytes"
	"context"
	"fmt"
	"github.com/traceforge/traceforge/internal/provider"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// verify --live against an upstream that quotes the key it refuses: the key
// never reaches the report, in any format, pattern-shaped or not.
func TestLiveErrorNeverEchoesKey(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s%s"}}`, r.Header.Get("x-api-key"), r.Header.Get("Authorization"))
	}))
	defer up.Close()
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	if _, err := snapshottest.WriteSet(dir, snapshottest.OpenAIChat("Echo"), snapshottest.AnthropicMessage("Echo")); err != nil {
		t.Fatal(err)
	}
	rep, set := loadSet(t, dir, nil)
	rep.Mode = "live"
	rep.LiveRuns = 1
	rep.Live = Live(context.Background(), LiveOptions{
		Snapshots: set.Snapshots, Display: ".ai-snapshots", Runs: 1, Concurrency: 2,
		Upstreams: map[provider.Name]string{provider.OpenAI: up.URL + "/v1", provider.Anthropic: up.URL},
		Keys:      map[provider.Name]string{provider.OpenAI: "SYNTHLIVEOPENAIKEY", provider.Anthropic: "SYNTHLIVEANTHROPICKEY"},
	})
	for _, format := range []string{"text", "json", "junit", "github"} {
		var b bytes.Buffer
		if err := render.Verify(&b, rep, format, false); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "Incorrect API key provided") {
			t.Errorf("%s report lost the upstream's message:\n%s", format, out)
		}
		if strings.Contains(out, "SYNTHLIVE") {
			t.Errorf("%s report holds the key:\n%s", format, out)
		}
	}
}

// verify --live sends a provider's upstream only that provider's own
// credentials: an OPENAI_API_KEY holding another cloud's credential (a
// Google OAuth token, a Bedrock API key) is refused, naming the kind and
// never the value, and the upstream — a sink counting connections — sees
// only the Anthropic call, which carries Anthropic's own key.
func TestLiveNeverSendsForeignCredential(t *testing.T) {
	for key, kind := range map[string]string{
		"ya29.SYNTHGOOGLETOKEN": "Google OAuth access token",
		"ABSKSYNTHBEDROCKKEY":   "Amazon Bedrock API key",
	} {
		t.Run(kind, func(t *testing.T) {
			sink := snapshottest.StartSink()
			defer sink.Close()
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			if _, err := snapshottest.WriteSet(dir, snapshottest.OpenAIChat("Echo"), snapshottest.AnthropicMessage("Echo")); err != nil {
				t.Fatal(err)
			}
			_, set := loadSet(t, dir, nil)
			res := Live(context.Background(), LiveOptions{
				Snapshots: set.Snapshots, Display: ".ai-snapshots", Runs: 1, Concurrency: 1,
				Upstreams: map[provider.Name]string{provider.OpenAI: sink.URL + "/v1", provider.Anthropic: sink.URL},
				Keys:      map[provider.Name]string{provider.OpenAI: key, provider.Anthropic: "sk-ant-own-key"},
			})
			reqs := sink.Requests()
			if len(reqs) != 1 || reqs[0].URL.Path != "/v1/messages" {
				t.Fatalf("the sink got %d request(s), want only the Anthropic one", len(reqs))
			}
			for _, r := range reqs {
				if strings.Contains(fmt.Sprint(r.Header), "SYNTH") {
					t.Fatalf("the foreign credential reached the sink: %v", r.Header)
				}
			}
			all := fmt.Sprintf("%+v", res)
			if !strings.Contains(all, kind) || !strings.Contains(all, "nothing was sent") || strings.Contains(all, "SYNTH") {
				t.Errorf("results do not refuse by kind only: %s", all)
			}
		})
	}
}
