package record_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/verify"
)

// An agent repeats an identical request and gets a different answer each
// time (DESIGN §13.4): record keeps the answers as ordered occurrences —
// the first under the request's own id — and still lists the
// nondeterminism (record exits 1, verify fails on the occurrences) unless
// a policy exception relaxes temperature for the model; then the run
// replays offline, answer for answer, the last one repeating.
func TestLLMOccurrencesReplayInTurn(t *testing.T) {
	for _, relaxed := range []bool{false, true} {
		name := "policy"
		if relaxed {
			name = "exception"
		}
		t.Run(name, func(t *testing.T) {
			fake := startFake(t, fakeupstream.Options{Nondeterministic: true})
			dir := t.TempDir()
			var cfg *check.Config
			if relaxed {
				var err error
				if cfg, err = check.ParseConfig([]byte(`{"exceptions":[{"model":"gpt-4o-mini","relax":["temperature","seed"]}]}`)); err != nil {
					t.Fatal(err)
				}
			}
			p := newProxy(t, dir, fake, func(c *record.Config) { c.Check.Config = cfg })
			var recorded []string
			for i := 0; i < 3; i++ {
				r := p.do("/v1/chat/completions", openaiChat("plan the next step"), nil)
				recorded = append(recorded, chatContent(t, r.body))
			}
			if recorded[0] == recorded[1] || recorded[1] == recorded[2] {
				t.Fatalf("the fake answered alike: %v", recorded)
			}
			sum := p.finish()
			files := snapshots(t, dir)
			if len(files) != 3 || sum.Recorded != 3 {
				t.Fatalf("want the three answers kept, got %d files:\n%s", len(files), summaryText(sum))
			}
			occ := map[int64]bool{}
			for _, data := range files {
				n, _ := snapshot.Int64(readRecord(t, data)["occurrence"])
				occ[n] = true
			}
			if !occ[0] || !occ[1] || !occ[2] {
				t.Errorf("occurrences %v, want 0 (no field), 1, 2", occ)
			}
			if got := hasKind(sum, record.KindNondeterminism); got == relaxed {
				t.Errorf("nondeterminism listed: %v, want %v:\n%s", got, !relaxed, summaryText(sum))
			}
			set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{Config: cfg}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var errs, notes int
			for _, f := range set.Findings {
				if f.Rule == check.RuleDeterminism && strings.HasSuffix(f.Pointer, "/occurrence") {
					if f.Severity == finding.Error {
						errs++
					} else {
						notes++
					}
				} else if f.Severity == finding.Error {
					t.Errorf("verify: %s", f.Error())
				}
			}
			if relaxed && (errs != 0 || notes != 2) || !relaxed && (errs != 2 || notes != 0) {
				t.Fatalf("verify: %d errors and %d notes about occurrences", errs, notes)
			}
			if !relaxed {
				return
			}
			fake.Close()
			rs := verify.NewReplayServer(verify.ReplayOptions{Set: set, Display: ".ai-snapshots"})
			srv := httptest.NewServer(serve.Guard(rs.Handler(), nil, verify.Refuse))
			defer srv.Close()
			for i := 0; i < 4; i++ {
				r, err := send(srv.URL+"/v1/chat/completions", openaiChat("plan the next step"), nil)
				if err != nil || r.status != 200 {
					t.Fatalf("replay %d: %v %d %s", i, err, r.status, r.body)
				}
				want := recorded[min(i, 2)]
				if got := chatContent(t, r.body); got != want {
					t.Errorf("replay %d: %q, want %q", i, got, want)
				}
			}
			if rep := rs.Finish(); len(rep.Misses) != 0 || len(rep.Unused) != 0 {
				t.Errorf("replay: %d misses, unused %v", len(rep.Misses), rep.Unused)
			}
		})
	}
}

func chatContent(t *testing.T, body []byte) string {
	t.Helper()
	m := jsonObject(t, body)
	return m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
}
