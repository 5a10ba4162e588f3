package setdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/golden"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), got)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=tf", "GIT_AUTHOR_EMAIL=tf@example.com", "GIT_COMMITTER_NAME=tf",
		"GIT_COMMITTER_EMAIL=tf@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func toolItem(city, finish string) snapshottest.Item {
	it := snapshottest.OpenAIChat("What is the weather in " + city + "?")
	it.Request["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "weather"}}}
	it.Request["messages"] = []any{map[string]any{"role": "user", "content": "Weather please"}}
	it.Response.Content = ""
	it.Response.FinishReason = finish
	it.Response.ToolCalls = []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "weather", "arguments": `{"city":"` + city + `"}`}}}
	return it
}

// scenario commits a set, then changes it in the work tree: a text change
// with model/token/latency deltas, a tool-call change with a new finish
// reason, a JSON answer whose value changed, a whitespace-only change, a
// source move, an addition and a removal.
func scenario(t *testing.T) (repo, dir string) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test: ", err)
	}
	repo = t.TempDir()
	dir = filepath.Join(repo, ".ai-snapshots")
	git(t, repo, "init", "-q")
	text := snapshottest.OpenAIChat("Summarize: the meeting moved to Friday.")
	text.Response.Content = "The meeting is now on Friday at 10."
	jsonAns := snapshottest.AnthropicMessage("Return the city as JSON")
	jsonAns.Response.Content = `{"city": "Paris", "country": "FR"}`
	ws := snapshottest.OpenAIChat("Say hi")
	ws.Response.Content = "Hi there!"
	moved := snapshottest.AnthropicMessage("Where did I move?")
	removed := snapshottest.OpenAIChat("This call is gone")
	tool := toolItem("Paris", "tool_calls")
	if _, err := snapshottest.WriteSet(dir, text, jsonAns, ws, moved, removed, tool); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-qm", "snapshots")

	later := snapshottest.BaseTime.Add(48 * time.Hour)
	text.Response.Content = "The meeting is now on Thursday at 10."
	text.Response.Model = "gpt-4o-mini-2025-01-01"
	text.Response.TokensUsed, text.Response.LatencyMS, text.Time = 34, 380, later
	jsonAns.Response.Content = `{"city": "Lyon", "country": "FR"}`
	ws.Response.Content = "Hi  there!\n"
	moved.Source = source.Source{File: "app/where.ts", Line: 3, Function: "where"}
	tool.Response.ToolCalls = []any{map[string]any{"id": "call_9", "type": "function", "function": map[string]any{"name": "weather", "arguments": `{"city":"Lyon"}`}}}
	tool.Response.FinishReason = "stop"
	added := snapshottest.OpenAIChat("A brand new call")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshottest.WriteSet(dir, text, jsonAns, ws, moved, tool, added); err != nil {
		t.Fatal(err)
	}
	return repo, dir
}

func compare(t *testing.T, repo, dir, rev string, failOn []change.Class) *Report {
	t.Helper()
	opts := check.Options{}
	old, err := Git{Dir: repo}.Read(context.Background(), rev, dir, ".ai-snapshots", opts)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := FromStore(&snapshot.Store{Dir: dir}, ".ai-snapshots", "work tree", opts)
	if err != nil {
		t.Fatal(err)
	}
	return Compare(old, cur, ".ai-snapshots", failOn)
}

func TestCompareClassifiesEveryChange(t *testing.T) {
	repo, dir := scenario(t)
	rep := compare(t, repo, dir, "HEAD", change.DefaultFailOn())
	got := map[string][]change.Class{}
	statuses := map[Status]int{}
	for _, it := range rep.Items {
		statuses[it.Status]++
		if it.Status == Changed {
			got[it.New.Request["messages"].([]any)[len(it.New.Request["messages"].([]any))-1].(map[string]any)["content"].(string)] = it.Change.Classes
		}
	}
	want := map[string][]change.Class{
		"Summarize: the meeting moved to Friday.": {change.Text},
		"Return the city as JSON":                 {change.Structure, change.Text},
		"Say hi":                                  {change.Whitespace},
		"Where did I move?":                       nil,
		"Weather please":                          {change.ToolCalls, change.Finish},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("classes = %v\nwant %v", got, want)
	}
	if statuses[Changed] != 5 || statuses[Added] != 1 || statuses[Removed] != 1 || rep.Unchanged != 0 {
		t.Errorf("statuses = %v, unchanged %d", statuses, rep.Unchanged)
	}
	// The added and the removed call share their source: shown as a replacement.
	for _, it := range rep.Items {
		if it.Status == Added && (it.Replaces == nil || it.Replaces.Response.Content != "Summary: This call is gone") {
			t.Errorf("added item does not replace the removed one: %+v", it.Replaces)
		}
	}
	// Whitespace and a pure source move do not fail by default; the other three do.
	if n := len(rep.Failing()); n != 3 {
		t.Errorf("failing = %d, want 3", n)
	}
	if n := len(compare(t, repo, dir, "HEAD", []change.Class{change.Whitespace}).Failing()); n != 1 {
		t.Errorf("fail_on [whitespace]: failing = %d, want 1", n)
	}
}

func TestReportGolden(t *testing.T) {
	repo, dir := scenario(t)
	rep := compare(t, repo, dir, "HEAD", change.DefaultFailOn())
	for _, format := range []string{"text", "markdown", "json"} {
		var b bytes.Buffer
		if err := rep.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		goldenFile(t, "report."+map[string]string{"text": "txt", "markdown": "md", "json": "json"}[format], b.String())
		if format == "json" && !json.Valid(b.Bytes()) {
			t.Error("json report is not valid JSON")
		}
	}
	if err := rep.Write(&bytes.Buffer{}, "yaml"); err == nil || !strings.Contains(err.Error(), `unknown format "yaml" (use text, markdown, json, html)`) {
		t.Errorf("unknown format: %v", err)
	}
}

// A file at REV that is no snapshot, a file in the work tree that cannot be
// read, and an unknown revision.
func TestGitEdges(t *testing.T) {
	repo, dir := scenario(t)
	if _, err := (Git{Dir: repo}).Read(context.Background(), "no-such-branch", dir, ".ai-snapshots", check.Options{}); !errors.Is(err, ErrUnknownRev) {
		t.Errorf("unknown revision: %v", err)
	}
	outside := t.TempDir()
	if _, err := (Git{Dir: outside}).Read(context.Background(), "HEAD", filepath.Join(outside, ".ai-snapshots"), ".ai-snapshots", check.Options{}); !errors.Is(err, ErrNotGit) {
		t.Errorf("outside a work tree: %v", err)
	}
	// A commit without the folder: every snapshot is "added".
	empty := strings.TrimSpace(git(t, repo, "mktree"))
	bare := strings.TrimSpace(git(t, repo, "commit-tree", empty, "-m", "nothing"))
	s, err := Git{Dir: repo}.Read(context.Background(), bare, dir, ".ai-snapshots", check.Options{})
	if err != nil || !s.Missing || len(s.Snapshots) != 0 {
		t.Errorf("no folder at REV: %+v %v", s, err)
	}

	broken := filepath.Join(dir, "openai", "aaaaaaaaaaaa.json")
	if err := os.WriteFile(broken, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := compare(t, repo, dir, "HEAD", nil)
	var found bool
	for _, it := range rep.Items {
		if it.File == "openai/aaaaaaaaaaaa.json" {
			found = it.Status == Unreadable && strings.Contains(it.Problem, "unexpected end of JSON")
		}
	}
	if !found || len(rep.Failing()) != 1 {
		t.Errorf("unreadable file not reported as failing: %+v", rep.Items)
	}
}

// The HTML page carries a row per item with its verdict, classes and diffs.
func TestPage(t *testing.T) {
	repo, dir := scenario(t)
	rep := compare(t, repo, dir, "HEAD", change.DefaultFailOn())
	p := rep.Page()
	verdicts := map[string]int{}
	for _, r := range p.Rows {
		verdicts[r.Verdict]++
		if r.Verdict == VerdictFails {
			var failTag bool
			for _, tag := range r.Tags {
				failTag = failTag || tag.Tone == "fail"
			}
			if !failTag || !r.Open {
				t.Errorf("failing row %s: tags %v open %v", r.Title, r.Tags, r.Open)
			}
		}
	}
	if want := map[string]int{"fails": 3, "changed": 2, "added": 1, "removed": 1}; !reflect.DeepEqual(verdicts, want) {
		t.Errorf("verdicts = %v, want %v", verdicts, want)
	}
	if p.Summary[0].Label != "failing" || p.Summary[0].N != 3 {
		t.Errorf("summary = %+v", p.Summary)
	}
	var b bytes.Buffer
	if err := rep.Write(&b, "html"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<del>Friday</del>", "<ins>Thursday</ins>", `data-verdict="removed"`, "weather({&#34;city&#34;:&#34;Lyon&#34;})"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// A set committed before the 1.1.0 upgrade compares with its migrated work
// tree as unchanged (read through migrate's 1.0.0 → 1.1.0 step), and a
// tampered 1.0.0 file is not laundered by that step.
func TestGitSideBeforeTheUpgrade(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test: ", err)
	}
	repo := t.TempDir()
	dir := filepath.Join(repo, ".ai-snapshots")
	git(t, repo, "init", "-q")
	it := snapshottest.OpenAIChat("Summarize: format upgrades")
	if _, err := snapshottest.WriteSet(dir, it); err != nil {
		t.Fatal(err)
	}
	rels, err := filepath.Glob(filepath.Join(dir, "openai", "*.json"))
	if err != nil || len(rels) != 1 {
		t.Fatalf("set files: %v %v", rels, err)
	}
	current, err := os.ReadFile(rels[0])
	if err != nil {
		t.Fatal(err)
	}
	// Write the same record as format 1.0.0 had it (no endpoint) and commit that.
	v, _ := snapshot.Decode(current)
	rec := v.(map[string]any)["snapshots"].([]any)[0].(map[string]any)
	delete(rec, "endpoint")
	if err := snapshot.Rehash(rec); err != nil {
		t.Fatal(err)
	}
	oldDoc, err := snapshot.FileDocumentAt(snapshot.PreviousVersion, rec)
	if err != nil {
		t.Fatal(err)
	}
	oldBytes, err := snapshot.MarshalFile(oldDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rels[0], oldBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-qm", "1.0.0 set")
	if err := os.WriteFile(rels[0], current, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := compare(t, repo, dir, "HEAD", nil)
	if len(rep.Items) != 0 || rep.Unchanged != 1 {
		t.Fatalf("the migrated snapshot should compare unchanged: %d unchanged, %+v", rep.Unchanged, rep.Items)
	}

	// Tampered at 1.0.0: the record hash no longer holds, so it stays unreadable.
	tampered := strings.Replace(string(oldBytes), "Summarize: format upgrades", "Summarize: tampered", 1)
	if err := os.WriteFile(rels[0], []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "commit", "-qam", "tampered")
	if err := os.WriteFile(rels[0], current, 0o644); err != nil {
		t.Fatal(err)
	}
	rep = compare(t, repo, dir, "HEAD", nil)
	if rep.Unchanged != 0 || len(rep.Items) != 1 || !strings.Contains(strings.Join(rep.Items[0].Notes, " "), "no longer supported") {
		t.Fatalf("a tampered 1.0.0 file must not compare as unchanged: %d unchanged, %+v", rep.Unchanged, rep.Items)
	}
}
