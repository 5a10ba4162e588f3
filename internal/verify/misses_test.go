package verify

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

// missSet writes four OpenAI chat snapshots into a project under a temp
// dir (app/ask.go exists there) and returns the project root.
func missSet(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "app", "ask.go"), []byte("package app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(it snapshottest.Item, file string, line int, mod func(map[string]any)) snapshottest.Item {
		it.Source = source.Source{File: file, Line: line, Function: "ask"}
		if mod != nil {
			mod(it.Request)
		}
		return it
	}
	items := []snapshottest.Item{
		at(snapshottest.OpenAIChat("Summarize the report for Monday"), "app/ask.go", 12, nil),
		at(snapshottest.OpenAIChat("Summarize the report for Monday"), "app/other.go", 3, func(r map[string]any) { r["model"] = "gpt-4o" }),
		at(snapshottest.OpenAIChat("Translate the report"), "app/translate.go", 7, nil),
		at(snapshottest.OpenAIChat("Write a poem about the sea"), "app/poem.go", 9, func(r map[string]any) { r["max_tokens"] = 300 }),
	}
	if _, err := snapshottest.WriteSet(filepath.Join(root, ".ai-snapshots"), items...); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestMissesExplained: an unmatched request is reported with its three
// closest snapshots (same source first, then same model and endpoint, then
// structural similarity), each with a JSON-pointer change list, and the
// unified diff against the closest, in every report format. The GitHub
// annotation points at the request's source line when that file exists in
// the project, else at the closest snapshot.
func TestMissesExplained(t *testing.T) {
	root := missSet(t)
	_, set, served := loadServed(t, filepath.Join(root, ".ai-snapshots"), nil)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots", Root: root})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()

	changed := snapshottest.OpenAIChat("Summarize the report for Tuesday").Request
	changed["user"] = "u-17"
	delete(changed, "seed")
	c := call{name: "changed", provider: provider.OpenAI, path: "/v1/chat/completions", body: changed}
	if resp, _ := send(t, srv.URL, c, changed, map[string]string{"X-Traceforge-Source": "app/ask.go:12:ask"}); resp.StatusCode != 404 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	gone := snapshottest.OpenAIChat("Summarize the report for Monday").Request
	gone["model"] = "gpt-4.1"
	c2 := call{name: "gone", provider: provider.OpenAI, path: "/v1/chat/completions", body: gone}
	send(t, srv.URL, c2, gone, map[string]string{"X-Traceforge-Source": "app/deleted.go:40:ask"})

	rep, _ := loadSet(t, filepath.Join(root, ".ai-snapshots"), nil)
	rep.Mode = "replay"
	rep.Replayed = rs.Finish()
	if len(rep.Misses) != 2 {
		t.Fatalf("misses: %+v", rep.Misses)
	}
	m := rep.Misses[0]
	if len(m.Near) != NearestCount {
		t.Fatalf("near: %+v", m.Near)
	}
	// Ranking: same source; then same model and endpoint, most similar
	// first; the other model last.
	srcOf := func(n result.Near) string { return n.Source }
	if got := []string{srcOf(m.Near[0]), srcOf(m.Near[1]), srcOf(m.Near[2])}; strings.Join(got, " ") != "app/ask.go:12 (ask) app/translate.go:7 (translate) app/poem.go:9 (poem)" &&
		strings.Join(got, " ") != "app/ask.go:12:ask app/translate.go:7:ask app/poem.go:9:ask" {
		t.Errorf("order: %v", got)
	}
	if !m.Near[0].SameSource || !m.Near[0].SameModel || m.Near[1].SameSource || !m.Near[1].SameModel {
		t.Errorf("tiers: %+v", m.Near)
	}
	wantChanges := []string{
		`/messages/1/content: "Summarize the report for Monday" → "Summarize the report for Tuesday"`,
		`/seed: 42 → absent`,
		`/user: absent → "u-17"`,
	}
	if strings.Join(m.Near[0].Changes, "\n") != strings.Join(wantChanges, "\n") {
		t.Errorf("changes:\n%s", strings.Join(m.Near[0].Changes, "\n"))
	}
	if m.AnnotateFile != "app/ask.go" || m.AnnotateLine != 12 {
		t.Errorf("annotation %s:%d", m.AnnotateFile, m.AnnotateLine)
	}
	var page bytes.Buffer
	if err := render.Verify(&page, rep, "html", false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"close #1", "close #3", "/messages/1/content: &#34;Summarize the report for Monday&#34; → &#34;Summarize the report for Tuesday&#34;"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	if rep.Misses[1].AnnotateFile != "" {
		t.Errorf("a missing source file must not be annotated: %+v", rep.Misses[1])
	}
	for _, f := range []string{"text", "json", "junit", "github"} {
		var b bytes.Buffer
		if err := render.Verify(&b, rep, f, false); err != nil {
			t.Fatal(err)
		}
		ext := map[string]string{"text": "txt", "json": "json", "junit": "xml", "github": "github.txt"}[f]
		goldenFile(t, "misses."+ext, b.String())
		if f == "github" {
			lines := strings.Split(b.String(), "\n")
			if !strings.HasPrefix(lines[0], "::error file=app/ask.go,line=12,title=traceforge drift::") ||
				!strings.HasPrefix(lines[1], "::error file=.ai-snapshots/openai/") {
				t.Errorf("annotations:\n%s", b.String())
			}
		}
	}
}

// TestNearestSkipsOtherProviders: only snapshots of the request's provider
// are candidates; fewer than three are fine.
func TestNearestSkipsOtherProviders(t *testing.T) {
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, snapshottest.OpenAIChat("a"), snapshottest.AnthropicMessage("a"), snapshottest.AnthropicMessage("b")); err != nil {
		t.Fatal(err)
	}
	_, set, served := loadServed(t, dir, nil)
	req, err := registry.Parse("POST", "/v1/chat/completions", nil, marshalJSON(t, snapshottest.OpenAIChat("b").Request))
	if err != nil {
		t.Fatal(err)
	}
	got := NewNearest(set.Snapshots, served).Find(req, nil, NearestCount)
	if len(got) != 1 || got[0].Snapshot.Provider != "openai" {
		t.Fatalf("got %+v", got)
	}
}

// BenchmarkNearest measures one explained miss against a 10k snapshot set:
// the ranking pass (features are computed once per set) plus the change
// lists of the three closest and the diff against the first.
func BenchmarkNearest(b *testing.B) {
	const n = 10000
	snaps := make([]*check.Snapshot, n)
	for i := range snaps {
		req := snapshottest.OpenAIChat(fmt.Sprintf("Summarize ticket %d: the customer reports error %d on page %d", i, i*7, i%13)).Request
		if i%3 == 0 {
			req["model"] = "gpt-4o"
		}
		snaps[i] = &check.Snapshot{Rel: fmt.Sprintf("openai/%012x.json", i), Provider: "openai",
			Record: &snapshot.Record{Provider: "openai", Request: req, Source: source.Source{File: "app/x.go", Line: i%50 + 1, Function: "f"}}}
	}
	body := snapshottest.OpenAIChat("Summarize ticket 5001: the customer reports error 1 on page 2").Request
	req, err := registry.Parse("POST", "/v1/chat/completions", nil, marshalJSON(b, body))
	if err != nil {
		b.Fatal(err)
	}
	src := source.Source{File: "app/x.go", Line: 2, Function: "f"}
	near := NewNearest(snaps, nil)
	near.Find(req, &src, NearestCount) // features, once per set
	b.ResetTimer()
	for b.Loop() {
		cands := near.Find(req, &src, NearestCount)
		if _, d := explain(".ai-snapshots", cands, req, nil, nil); d == "" {
			b.Fatal("no diff")
		}
	}
}

// BenchmarkNearestCold includes computing the set's features (the first miss).
func BenchmarkNearestCold(b *testing.B) {
	const n = 10000
	snaps := make([]*check.Snapshot, n)
	for i := range snaps {
		req := snapshottest.OpenAIChat(fmt.Sprintf("Summarize ticket %d", i)).Request
		snaps[i] = &check.Snapshot{Rel: fmt.Sprintf("openai/%012x.json", i), Provider: "openai", Record: &snapshot.Record{Provider: "openai", Request: req}}
	}
	req, err := registry.Parse("POST", "/v1/chat/completions", nil, marshalJSON(b, snapshottest.OpenAIChat("Summarize ticket x").Request))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if len(NewNearest(snaps, nil).Find(req, nil, NearestCount)) != NearestCount {
			b.Fatal("short")
		}
	}
}

// With the project's key normalizers, replay matches a request whose
// volatile values differ from the recording, counts it and names the
// rules; the change list of a real miss is computed under the same rules.
func TestReplayMatchedViaNormalizers(t *testing.T) {
	cfg, err := check.ParseConfig([]byte(`{"normalize":[{"rule":"date"},{"rule":"drop","paths":["/user"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	it := snapshottest.OpenAIChat("Report for 2026-01-09")
	it.KeyContext = cfg.KeyContext()
	dir := t.TempDir()
	if _, err := snapshottest.WriteSet(dir, it); err != nil {
		t.Fatal(err)
	}
	_, set, served := loadServed(t, dir, cfg)
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots"})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()
	c := call{name: "n", provider: provider.OpenAI, path: "/v1/chat/completions"}
	for _, day := range []string{"2026-01-09", "2030-05-01", "2030-05-01"} { // the repeat is a memo hit
		body := snapshottest.OpenAIChat("Report for " + day).Request
		body["user"] = "u-" + day
		if resp, data := send(t, srv.URL, c, body, nil); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", day, resp.StatusCode, data)
		}
	}
	miss := snapshottest.OpenAIChat("Summary for 2030-05-01").Request
	send(t, srv.URL, c, miss, nil)
	send(t, srv.URL, c, miss, nil)
	if n := rs.memo.Len(); n != 2 {
		t.Errorf("memo holds %d requests; want the 2 distinct hits, no miss", n)
	}
	rep := rs.Finish()
	if rep.Served != 3 || len(rep.Normalized) != 1 || rep.Normalized[0].Count != 3 || strings.Join(rep.Normalized[0].Rules, ",") != "date,drop" {
		t.Fatalf("normalized matches: %+v", rep.Normalized)
	}
	if len(rep.Misses) != 1 || rep.Misses[0].Count != 2 || len(rep.Misses[0].Near) != 1 ||
		strings.Join(rep.Misses[0].Near[0].Changes, "\n") != `/messages/1/content: "Report for <date>" → "Summary for <date>"` {
		t.Fatalf("miss: %+v", rep.Misses)
	}
	var b bytes.Buffer
	r := result.VerifyReport{Dir: ".ai-snapshots", Mode: "replay", Replayed: rep}
	if err := render.Verify(&b, &r, "text", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "matched via date, drop (3 request(s))") {
		t.Errorf("text report:\n%s", b.String())
	}
}

// A served set keeps no requests (replay.Compact): an explained miss reads
// its closest snapshots' files again. A file rewritten while the server ran
// is named with the reason instead of being compared as if it were the
// snapshot that was checked.
func TestMissExplainedFromServedSetRereadsFiles(t *testing.T) {
	root := missSet(t)
	dir := filepath.Join(root, ".ai-snapshots")
	_, set, served := loadServed(t, dir, nil)
	for _, s := range set.Snapshots {
		if !served.IsCompact(s) || len(s.Record.Request) != 1 {
			t.Fatalf("%s: the served set keeps the request %v", s.Rel, s.Record.Request)
		}
	}
	rs := NewReplayServer(ReplayOptions{Set: set, Entries: served, Display: ".ai-snapshots", Root: root})
	srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, Refuse))
	defer srv.Close()
	changed := snapshottest.OpenAIChat("Summarize the report for Tuesday").Request
	c := call{name: "changed", provider: provider.OpenAI, path: "/v1/chat/completions", body: changed}
	if resp, _ := send(t, srv.URL, c, changed, map[string]string{"X-Traceforge-Source": "app/ask.go:12:ask"}); resp.StatusCode != 404 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	first := rs.Finish().Misses[0]
	if len(first.Near) != NearestCount || !strings.Contains(first.Diff, "-        \"content\": \"Summarize the report for Monday\",") {
		t.Fatalf("explained miss from re-read files: %+v\n%s", first.Near, first.Diff)
	}
	closest := strings.TrimPrefix(first.Near[0].File, ".ai-snapshots/")
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(closest)), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := rs.Finish().Misses[0]
	if len(m.Near[0].Changes) != 1 || !strings.Contains(m.Near[0].Changes[0], "cannot compare: snapshot "+closest) ||
		!strings.HasPrefix(m.Diff, "cannot diff against .ai-snapshots/"+closest) {
		t.Fatalf("rewritten closest file: %+v\n%s", m.Near[0], m.Diff)
	}
	if m.Near[1].Changes[0] != first.Near[1].Changes[0] {
		t.Errorf("the other candidates are still compared: %v vs %v", m.Near[1].Changes, first.Near[1].Changes)
	}
}
