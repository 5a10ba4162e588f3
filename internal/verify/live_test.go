package verify

import (
	"bytes"
	"context"
	"encoding/xml"
	"github.com/traceforge/traceforge/internal/provider"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
)

// liveCalls is a small table: plain and streamed recordings of both
// providers, and a tool call.
func liveCalls() []call {
	t := table()
	return []call{t[0], t[1], t[3], t[6], t[7]}
}

func runLive(t *testing.T, dir string, cfg *check.Config, up *fakeupstream.Server, runs int) *result.VerifyReport {
	t.Helper()
	rep, set := loadSet(t, dir, cfg)
	rep.Mode = "live"
	rep.LiveRuns = runs
	rep.Upstreams = []string{"openai: " + up.URL + "/v1", "anthropic: " + up.URL}
	var progress []int
	rep.Live = Live(context.Background(), LiveOptions{
		Snapshots: set.Snapshots, Display: ".ai-snapshots", Runs: runs, Concurrency: 3,
		Upstreams: map[provider.Name]string{provider.OpenAI: up.URL + "/v1", provider.Anthropic: up.URL}, Keys: map[provider.Name]string{provider.OpenAI: "sk-test", provider.Anthropic: "sk-ant-test"},
		Progress: func(done, total int) { progress = append(progress, done) },
	})
	if want := len(set.Snapshots) * runs; len(progress) != want || progress[len(progress)-1] != want {
		t.Fatalf("progress calls %v, want %d", progress, want)
	}
	return rep
}

func TestLiveUnchanged(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	rec := recordTable(t, up, liveCalls())
	before := up.Requests()
	rep := runLive(t, rec.dir, nil, up, 3)
	if got := up.Requests() - before; got != int64(3*len(liveCalls())) {
		t.Fatalf("upstream got %d requests, want %d", got, 3*len(liveCalls()))
	}
	// The stored request JSON is sent, without the stream fields.
	last := up.LastRequest()
	if bytes.Contains(last.Body, []byte(`"stream"`)) {
		t.Errorf("live request streamed: %s", last.Body)
	}
	for _, l := range rep.Live {
		if l.Failed || l.Different != 0 || l.Succeeded != 3 {
			t.Errorf("%s: %+v", l.File, l)
		}
	}
	if rep.Failed() {
		t.Fatal("unchanged upstream must pass")
	}
}

func TestLiveNondeterministic(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	rec := recordTable(t, up, liveCalls()[:1])
	up.SetOptions(fakeupstream.Options{Nondeterministic: true})
	rep := runLive(t, rec.dir, nil, up, 4)
	l := rep.Live[0]
	if !l.Nondet || l.Drift || !l.Failed || l.Different != 4 {
		t.Fatalf("%+v", l)
	}
	want := "❌ Non-deterministic behavior detected\n   4/4 runs produced different outputs\n   → CI fails"
	if l.Message != want {
		t.Fatalf("message %q, want %q", l.Message, want)
	}
	var text bytes.Buffer
	_ = render.Verify(&text, rep, "text", false)
	if !strings.Contains(text.String(), "  ❌ Non-deterministic behavior detected\n     4/4 runs produced different outputs\n     → CI fails\n") {
		t.Fatalf("text report:\n%s", text.String())
	}
}

func TestLiveDrift(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	rec := recordTable(t, up, liveCalls())
	up.SetOptions(fakeupstream.Options{ModelSuffix: "-2026-02-01", ContentPrefix: "Note: "})
	rep := runLive(t, rec.dir, nil, up, 2)
	for _, l := range rep.Live {
		if len(l.Classes) == 0 {
			// The tool call: its answer has no text to prefix, only the
			// served model changed, which is reported but is never a
			// class (DESIGN §12.8 "Diff classes"): it passes.
			if l.Failed || !strings.Contains(strings.Join(l.Notes, "\n"), `only in model ("gpt-4o-mini" → "gpt-4o-mini-2026-02-01")`) {
				t.Errorf("%s: %+v", l.File, l)
			}
			continue
		}
		if !l.Drift || l.Nondet || !l.Failed || l.Different != 2 {
			t.Fatalf("%s: %+v", l.File, l)
		}
		if !strings.Contains(l.Diff, "+model: ") && !strings.Contains(l.Diff, `+  "model": "`) {
			t.Errorf("%s: diff lacks the model change:\n%s", l.File, l.Diff)
		}
		if len(l.Notes) == 0 || !strings.HasPrefix(l.Notes[0], "likely cause: the served model changed") {
			t.Errorf("%s: notes %v", l.File, l.Notes)
		}
	}
	var text bytes.Buffer
	_ = render.Verify(&text, rep, "text", false)
	goldenFile(t, "live_drift.txt", text.String())
}

func TestLiveUpstreamErrors(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	rec := recordTable(t, up, liveCalls()[:2])
	up.SetOptions(fakeupstream.Options{FailStatus: 503})
	rep := runLive(t, rec.dir, nil, up, 2)
	for _, l := range rep.Live {
		if !l.Failed || l.Drift || l.Nondet || l.Succeeded != 0 || len(l.Errors) != 1 || !strings.Contains(l.Errors[0], "HTTP 503") || !strings.Contains(l.Errors[0], "(2 runs)") {
			t.Fatalf("%s: %+v", l.File, l)
		}
	}
	// A stopped upstream: transport errors, reported, no drift.
	up.Close()
	rep = runLive(t, rec.dir, nil, up, 1)
	for _, l := range rep.Live {
		if !l.Failed || l.Drift || len(l.Errors) != 1 || strings.Contains(l.Errors[0], up.URL+"/") {
			t.Fatalf("%s: %+v", l.File, l)
		}
	}
}

func TestLivePolicyException(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	c := liveCalls()[0]
	c.body = openaiChat("Reason about snapshots", map[string]any{"model": "o3-mini", "temperature": 1})
	delete(c.body, "seed")
	rec := recordTable(t, up, []call{c})
	cfg, err := check.ParseConfig([]byte(`{"exceptions":[{"model":"o3*","relax":["temperature","seed"],"live_compare":["finish_reason","tool_names"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Content changes every run, but only finish_reason and tool names count.
	up.SetOptions(fakeupstream.Options{Nondeterministic: true})
	rep := runLive(t, rec.dir, cfg, up, 3)
	l := rep.Live[0]
	if l.Failed || !l.ByPolicy || !strings.Contains(l.Notes[0], "nondeterministic by policy") {
		t.Fatalf("%+v", l)
	}
	// A changed finish reason still fails.
	up.SetOptions(fakeupstream.Options{ContentPrefix: strings.Repeat("word ", 60)})
	rep = runLive(t, rec.dir, cfg, up, 2)
	if l := rep.Live[0]; !l.Failed || !l.Drift || !strings.Contains(strings.Join(l.Changes, "\n"), "finish_reason") {
		t.Fatalf("%+v", l)
	}
}

// junitDoc is the JUnit XML shape CI reporters read.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failures  []struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, data []byte) junitDoc {
	t.Helper()
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, data)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("want one testsuite, got %d", len(doc.Suites))
	}
	s := doc.Suites[0]
	failed := 0
	for _, c := range s.Cases {
		if c.Name == "" || c.Classname == "" {
			t.Errorf("testcase without name/classname: %+v", c)
		}
		if len(c.Failures) > 0 {
			failed++
		}
		for _, f := range c.Failures {
			if f.Message == "" || f.Type == "" {
				t.Errorf("failure without message/type in %s", c.Name)
			}
		}
	}
	if s.Tests != len(s.Cases) || s.Failures != failed || doc.Tests != s.Tests || doc.Failures != s.Failures {
		t.Fatalf("counts: suites %d/%d, suite %d/%d, counted %d/%d", doc.Tests, doc.Failures, s.Tests, s.Failures, len(s.Cases), failed)
	}
	return doc
}

func TestLiveJUnit(t *testing.T) {
	up := startUpstream(t, fakeupstream.Options{})
	lc := liveCalls()
	rec := recordTable(t, up, []call{lc[0], lc[1], lc[3]}) // no tool call: its arguments stay stable
	up.SetOptions(fakeupstream.Options{Nondeterministic: true})
	rep := runLive(t, rec.dir, nil, up, 2)
	var b bytes.Buffer
	if err := render.Verify(&b, rep, "junit", false); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, b.Bytes())
	s := doc.Suites[0]
	if s.Tests != 3 || s.Failures != 3 {
		t.Fatalf("tests %d failures %d", s.Tests, s.Failures)
	}
	for _, c := range s.Cases {
		if c.Failures[0].Type != "nondeterminism" || !strings.Contains(c.Failures[0].Message, "2/2 runs produced different outputs") ||
			!strings.Contains(c.Failures[0].Text, "❌ Non-deterministic behavior detected\n   2/2 runs produced different outputs\n   → CI fails") {
			t.Errorf("%s: %+v", c.Name, c.Failures)
		}
	}
}
