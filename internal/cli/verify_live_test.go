package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

type junitDocument struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name     string `xml:"name,attr"`
			Failures []struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnitDoc(t *testing.T, data []byte) junitDocument {
	t.Helper()
	var doc junitDocument
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit XML: %v\n%s", err, data)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Tests != len(doc.Suites[0].Cases) || doc.Tests != doc.Suites[0].Tests || doc.Failures != doc.Suites[0].Failures {
		t.Fatalf("JUnit shape/counts wrong:\n%s", data)
	}
	return doc
}

func startFake(t *testing.T, o fakeupstream.Options) *fakeupstream.Server {
	t.Helper()
	up, err := fakeupstream.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	return up
}

func TestVerifyLiveMissingKey(t *testing.T) {
	up := startFake(t, fakeupstream.Options{})
	e := newVerifyEnv(t, baseVerifyItems()...)
	e.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	code, out, errOut := e.run("verify", "--live", "--openai-upstream", up.URL+"/v1", "--anthropic-upstream", up.URL)
	if code != 2 || !strings.Contains(errOut, "OPENAI_API_KEY") || out != "" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if up.Requests() != 0 {
		t.Fatalf("%d upstream requests before the key check", up.Requests())
	}
	// A set with only Anthropic snapshots needs no OpenAI key.
	e2 := newVerifyEnv(t, snapshottest.AnthropicMessage("hi"))
	e2.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	e2.env["TRACEFORGE_ANTHROPIC_UPSTREAM"] = up.URL
	if code, _, errOut := e2.run("verify", "--live"); code == 2 {
		t.Fatalf("anthropic-only set: exit 2\n%s", errOut)
	}
	if up.Requests() != 1 {
		t.Fatalf("TRACEFORGE_ANTHROPIC_UPSTREAM not used: %d requests", up.Requests())
	}
}

// The snapshottest sets answer "Summary: …" while the fake upstream echoes:
// every snapshot drifts, consistently.
func TestVerifyLiveDriftJSONAndShards(t *testing.T) {
	up := startFake(t, fakeupstream.Options{})
	e := newVerifyEnv(t, snapshottest.Many(10)...)
	e.env["OPENAI_API_KEY"] = "sk-test"
	e.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	e.env["OPENAI_BASE_URL"] = up.URL + "/v1"
	e.env["ANTHROPIC_BASE_URL"] = up.URL
	seen := map[string]int{}
	for _, shard := range []string{"1/2", "2/2"} {
		code, out, errOut := e.run("verify", "--live", "--runs", "2", "--concurrency", "3", "--shard", shard, "--format", "json")
		if code != 1 && code != 0 {
			t.Fatalf("shard %s: exit %d\n%s\n%s", shard, code, out, errOut)
		}
		var rep struct {
			OK    bool
			Mode  string
			Shard string
			Live  []struct {
				File      string
				Runs      int
				Different int
				Drift     bool
				Diff      string
				Notes     []string
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if rep.OK != (len(rep.Live) == 0) || rep.OK != (code == 0) || rep.Mode != "live" || rep.Shard != shard {
			t.Fatalf("exit %d, report %+v", code, rep)
		}
		for _, l := range rep.Live {
			seen[l.File]++
			if !l.Drift || l.Runs != 2 || l.Different != 2 || !strings.Contains(l.Diff, "+Echo: ") {
				t.Errorf("%s: %+v", l.File, l)
			}
		}
	}
	if len(seen) != 10 {
		t.Fatalf("shards covered %d snapshots, want 10: %v", len(seen), seen)
	}
	for f, n := range seen {
		if n != 1 {
			t.Errorf("%s verified %d times", f, n)
		}
	}
	if up.Requests() != 20 {
		t.Errorf("upstream requests %d, want 20", up.Requests())
	}
}

func TestVerifyLiveNondeterministicText(t *testing.T) {
	up := startFake(t, fakeupstream.Options{Nondeterministic: true})
	e := newVerifyEnv(t, snapshottest.OpenAIChat("hello"))
	e.env["OPENAI_API_KEY"] = "sk-test"
	code, out, errOut := e.run("verify", "--live", "--runs", "3", "--openai-upstream", up.URL+"/v1")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := "  ❌ Non-deterministic behavior detected\n     3/3 runs produced different outputs\n     → CI fails\n"
	if !strings.Contains(out, want) || !strings.Contains(out, "FAIL 1 snapshot(s) failed live") {
		t.Fatalf("stdout:\n%s", out)
	}
}

// verify --live reads fail_on and prices from .traceforge.json: a text
// drift passes when fail_on is empty, and the report carries the run's
// totals priced from the config.
func TestVerifyLiveFailOnAndTotals(t *testing.T) {
	up := startFake(t, fakeupstream.Options{})
	e := newVerifyEnv(t, snapshottest.OpenAIChat("hello"))
	e.env["OPENAI_API_KEY"] = "sk-test"
	e.env["OPENAI_BASE_URL"] = up.URL + "/v1"

	// Default fail_on: the changed answer (text) fails.
	code, out, errOut := e.run("verify", "--live", "--runs", "2")
	if code != 1 || !strings.Contains(out, "  classes: text (failing: text)\n") || !strings.Contains(out, "fail_on: tool-calls, structure, finish, text\n") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.HasPrefix(lines[len(lines)-1], "totals: 2 calls, ") {
		t.Errorf("the report does not end with the totals:\n%s", out)
	}

	cfg := `{"fail_on": [], "prices": {"gpt-4o-mini": {"input": 1, "output": 2}}}`
	if err := os.WriteFile(filepath.Join(e.root, ".traceforge.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = e.run("verify", "--live", "--runs", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("fail_on [] still fails: exit %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		OK     bool     `json:"ok"`
		FailOn []string `json:"fail_on"`
		Live   []struct {
			Classes []string `json:"classes"`
			Failing []string `json:"failing_classes"`
			Failed  bool     `json:"failed"`
		} `json:"live"`
		Totals struct {
			Calls  int `json:"calls"`
			Tokens struct {
				Input, Output, Total int64
			} `json:"tokens"`
			CostUSD *float64 `json:"cost_usd"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !rep.OK || rep.FailOn == nil || len(rep.FailOn) != 0 || len(rep.Live) != 1 || rep.Live[0].Failed ||
		strings.Join(rep.Live[0].Classes, ",") != "text" || rep.Live[0].Failing != nil {
		t.Fatalf("report: %s", out)
	}
	tot := rep.Totals
	want := float64(tot.Tokens.Input*1+tot.Tokens.Output*2) / 1e6
	if tot.Calls != 2 || tot.Tokens.Input == 0 || tot.Tokens.Output == 0 || tot.CostUSD == nil || *tot.CostUSD != want {
		t.Fatalf("totals %+v (cost %v), want 2 calls priced at $%.6f", tot, tot.CostUSD, want)
	}
}
