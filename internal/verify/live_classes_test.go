package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/traceforge/traceforge/internal/provider"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// liveWithFailOn runs --live over dir with the config's fail_on, as the
// command does.
func liveWithFailOn(t *testing.T, dir string, cfg *check.Config, up *fakeupstream.Server, runs, conc int, totals *ledger.Totals) *result.VerifyReport {
	t.Helper()
	rep, set := loadSet(t, dir, cfg)
	rep.Mode, rep.LiveRuns, rep.FailOn = "live", runs, cfg.FailClasses()
	rep.Upstreams = []string{"openai: " + up.URL + "/v1", "anthropic: " + up.URL}
	rep.Live = Live(context.Background(), LiveOptions{
		Snapshots: set.Snapshots, Display: ".ai-snapshots", Runs: runs, Concurrency: conc,
		Upstreams: map[provider.Name]string{provider.OpenAI: up.URL + "/v1", provider.Anthropic: up.URL}, Keys: map[provider.Name]string{provider.OpenAI: "sk-test", provider.Anthropic: "sk-ant-test"},
		FailOn: rep.FailOn, Totals: totals,
	})
	return rep
}

// A live answer that differs from the recording in whitespace only passes
// by default (fail_on without whitespace) and fails when fail_on lists it.
func TestLiveWhitespaceChange(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	rec := recordTable(t, up, liveCalls()[:2])
	up.SetOptions(fakeupstream.Options{ContentPrefix: "  \n"})

	rep := liveWithFailOn(t, rec.dir, nil, up, 2, 2, nil)
	if rep.Failed() {
		t.Fatalf("a whitespace-only change failed by default: %+v", rep.Live)
	}
	for _, l := range rep.Live {
		if l.Failed || l.Drift || l.Nondet || l.Different != 0 || !reflect.DeepEqual(l.Classes, []change.Class{change.Whitespace}) || l.FailingClasses != nil {
			t.Errorf("%s: %+v", l.File, l)
		}
		if l.Change == nil || l.Change.Content == nil || !strings.HasPrefix(l.Change.Content.To, "  \n") {
			t.Errorf("%s: shown change %+v", l.File, l.Change)
		}
		if !strings.Contains(strings.Join(l.Notes, "\n"), "2/2 runs differ from the recording only in whitespace") {
			t.Errorf("%s: notes %q", l.File, l.Notes)
		}
	}
	for format, want := range map[string][]string{
		"text":   {"  classes: whitespace\n", "fail_on: tool-calls, structure, finish, text\n", "\nok   "},
		"github": {"::notice file=.ai-snapshots/openai/", "title=traceforge live::classes: whitespace%0A2/2 runs differ from the recording only in whitespace"},
		"junit":  {"live: 2/2 runs pass; classes: whitespace"},
	} {
		var b bytes.Buffer
		if err := render.Verify(&b, rep, format, false); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s report lacks %q:\n%s", format, w, b.String())
			}
		}
	}

	cfg, err := check.ParseConfig([]byte(`{"fail_on":["whitespace","tool-calls"]}`))
	if err != nil {
		t.Fatal(err)
	}
	rep = liveWithFailOn(t, rec.dir, cfg, up, 2, 2, nil)
	if !rep.Failed() {
		t.Fatal("a whitespace change passed although fail_on lists whitespace")
	}
	for _, l := range rep.Live {
		if !l.Failed || !l.Drift || l.Different != 2 || !reflect.DeepEqual(l.FailingClasses, []change.Class{change.Whitespace}) {
			t.Errorf("%s: %+v", l.File, l)
		}
	}
	// Every format names the classes.
	var js bytes.Buffer
	if err := render.Verify(&js, rep, "json", false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FailOn []string `json:"fail_on"`
		Live   []struct {
			Classes []string `json:"classes"`
			Failing []string `json:"failing_classes"`
		} `json:"live"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.FailOn, []string{"whitespace", "tool-calls"}) || len(doc.Live) != 2 || !reflect.DeepEqual(doc.Live[0].Failing, []string{"whitespace"}) || !reflect.DeepEqual(doc.Live[0].Classes, []string{"whitespace"}) {
		t.Errorf("json report: %s", js.String())
	}
	for format, want := range map[string]string{
		"text":   "  classes: whitespace (failing: whitespace)\n",
		"junit":  "Drift: 2/2 live runs differ from the recording (whitespace)",
		"github": "classes: whitespace (failing: whitespace)",
	} {
		var b bytes.Buffer
		if err := render.Verify(&b, rep, format, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s report lacks %q:\n%s", format, want, b.String())
		}
	}
}

// judgeOne classifies one live answer against a recorded one.
func judgeOne(t *testing.T, recorded, live snapshot.Fields, failOn []change.Class) result.LiveResult {
	t.Helper()
	s := &check.Snapshot{Rel: "openai/aaaaaaaaaaaa.json", Provider: "openai", Record: &snapshot.Record{
		Request:  map[string]any{"model": "gpt-4o-mini"},
		Response: snapshot.Response{Fields: recorded},
	}}
	return judge(".ai-snapshots", s, []liveRun{{fields: live}}, failOn, nil)
}

func weatherCall(id, args string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": args}}
}

func TestLiveToolCallsChange(t *testing.T) {
	rec := snapshot.Fields{FinishReason: "tool_calls", TokensUsed: 30, Model: "gpt-4o-mini",
		ToolCalls: []any{weatherCall("call_1", `{"city": "Paris"}`)}}

	// Another id and other spacing: the same call.
	same := rec
	same.ToolCalls = []any{weatherCall("call_9", `{"city":"Paris"}`)}
	if l := judgeOne(t, rec, same, change.DefaultFailOn()); l.Failed || len(l.Classes) != 0 {
		t.Fatalf("equal tool calls: %+v", l)
	}

	other := rec
	other.ToolCalls = []any{weatherCall("call_1", `{"city":"Rome"}`)}
	l := judgeOne(t, rec, other, change.DefaultFailOn())
	if !l.Failed || !l.Drift || !reflect.DeepEqual(l.FailingClasses, []change.Class{change.ToolCalls}) ||
		l.Change == nil || l.Change.ToolCalls == nil || l.Change.ToolCalls.To[0].Arguments != `{"city":"Rome"}` {
		t.Fatalf("changed arguments: %+v", l)
	}
	if !strings.Contains(l.Diff, "Rome") {
		t.Errorf("diff lacks the new argument:\n%s", l.Diff)
	}
	// fail_on without tool-calls: reported, passes.
	l = judgeOne(t, rec, other, []change.Class{change.Text})
	if l.Failed || !reflect.DeepEqual(l.Classes, []change.Class{change.ToolCalls}) || !strings.Contains(strings.Join(l.Notes, "\n"), "only in tool-calls (not in fail_on)") {
		t.Fatalf("tool-calls not in fail_on: %+v", l)
	}
}

// A token or model change is reported, never a class: it does not fail.
func TestLiveTokensOnlyChange(t *testing.T) {
	rec := snapshot.Fields{Content: "Hi", FinishReason: "stop", TokensUsed: 30, Model: "gpt-4o-mini"}
	live := rec
	live.TokensUsed = 31
	l := judgeOne(t, rec, live, change.DefaultFailOn())
	if l.Failed || len(l.Classes) != 0 || !strings.Contains(strings.Join(l.Notes, "\n"), "only in tokens_used (30 → 31)") {
		t.Fatalf("%+v", l)
	}
}

// Every successful live run is added to the run's totals.
func TestLiveTotals(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	rec := recordTable(t, up, liveCalls()[:2])
	_, set := loadSet(t, rec.dir, nil)
	var want int64
	for _, s := range set.Snapshots {
		want += s.Record.Response.TokensUsed
	}
	// One request at a time; every reading of the clock advances it 25ms,
	// so each run takes 25ms.
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	liveNow = func() time.Time { at = at.Add(25 * time.Millisecond); return at }
	t.Cleanup(func() { liveNow = time.Now })
	totals := ledger.NewTotals(nil)
	rep := liveWithFailOn(t, rec.dir, nil, up, 3, 1, totals)
	if rep.Failed() {
		t.Fatalf("%+v", rep.Live)
	}
	sum := totals.Summary()
	if sum.Calls != 6 || sum.Tokens.Total != 3*want || sum.CostUSD != nil || sum.LatencyMS.P50 != 25 || sum.LatencyMS.P95 != 25 {
		t.Fatalf("totals %+v, want 6 calls, %d tokens, 25ms", sum, 3*want)
	}
	rep.Totals = &sum
	var text, js bytes.Buffer
	_ = render.Verify(&text, rep, "text", false)
	_ = render.Verify(&js, rep, "json", false)
	line := render.TotalsLine(sum)
	if !strings.HasSuffix(text.String(), "\n"+line+"\n") {
		t.Errorf("text report does not end with %q:\n%s", line, text.String())
	}
	var doc struct {
		Totals *ledger.Summary `json:"totals"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Totals == nil || doc.Totals.Calls != 6 || doc.Totals.Tokens.Total != 3*want {
		t.Errorf("json totals: %v %s", err, js.String())
	}
}
