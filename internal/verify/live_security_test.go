package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

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
		OpenAIUpstream: up.URL + "/v1", AnthropicUpstream: up.URL,
		OpenAIKey: "SYNTHLIVEOPENAIKEY", AnthropicKey: "SYNTHLIVEANTHROPICKEY",
	})
	for _, format := range []string{"text", "json", "junit", "github"} {
		var b bytes.Buffer
		if err := rep.Write(&b, format, false); err != nil {
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
