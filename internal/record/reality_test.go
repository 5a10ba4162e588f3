package record_test

// Provider reality (issue 30 item 3, DESIGN §13.3): real 200 answers to
// real requests record, verify and replay unchanged. Every fixture under
// testdata/reality is an answer in the provider's documented wire format.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/replay"
)

// realityUpstream answers every call with the fixtures it is given in
// turn (the last one repeating): .sse files as text/event-stream, the rest
// as JSON. It keeps the bodies it was sent.
type realityUpstream struct {
	*httptest.Server
	mu       sync.Mutex
	answers  [][]byte
	types    []string
	n        int
	received [][]byte
}

func newRealityUpstream(t *testing.T, fixtures ...string) *realityUpstream {
	t.Helper()
	u := &realityUpstream{}
	for _, f := range fixtures {
		b, err := os.ReadFile(filepath.Join("testdata", "reality", f))
		if err != nil {
			t.Fatal(err)
		}
		u.answers = append(u.answers, b)
		ct := "application/json"
		if strings.HasSuffix(f, ".sse") {
			ct = "text/event-stream"
		}
		u.types = append(u.types, ct)
	}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		i := min(u.n, len(u.answers)-1)
		u.n++
		u.received = append(u.received, b)
		u.mu.Unlock()
		w.Header().Set("Content-Type", u.types[i])
		_, _ = w.Write(u.answers[i])
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *realityUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.received)
}

func (u *realityUpstream) lastReceived() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.received[len(u.received)-1]
}

// realityProxy records into dir with every provider's upstream at up; with
// replayFrom set it is a record --only-missing run answering from that set.
func realityProxy(t *testing.T, dir string, up *httptest.Server, replayFrom string) *proxy {
	t.Helper()
	fake := startFake(t, fakeupstream.Options{})
	return newProxy(t, dir, fake, func(c *record.Config) {
		c.Upstreams[provider.OpenAI] = up.URL + "/v1"
		c.Upstreams[provider.Anthropic] = up.URL
		c.Upstreams[provider.Gemini] = up.URL
		if replayFrom != "" {
			c.OnlyMissing = replay.NewResponder(replayFrom)
		}
	})
}

type realityCase struct {
	name    string
	path    string
	request string // the request body as the application sends it
	answer  string // the fixture the upstream answers with
	// exact: the application gets the fixture byte for byte while
	// recording (nothing was added to the request that changes it).
	exact bool
	// replayHas are strings the replayed answer must contain.
	replayHas []string
}

// runReality records one call, checks what the application got and what
// was stored, verifies the set, and replays the call from it (the upstream
// is not asked). It returns the recorded reply, the stored record and the
// replayed reply.
func runReality(t *testing.T, c realityCase) (reply, map[string]any, reply) {
	t.Helper()
	up := newRealityUpstream(t, c.answer)
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := realityProxy(t, dir, up.Server, "")
	r := p.do(c.path, []byte(c.request), nil)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	want, _ := os.ReadFile(filepath.Join("testdata", "reality", c.answer))
	if c.exact && !bytes.Equal(r.body, want) {
		t.Fatalf("the application got\n%s\nnot the upstream's answer\n%s", r.body, want)
	}
	if s := p.finish(); s.Failed() || len(s.Problems) > 0 {
		t.Fatalf("run failed:\n%s", summaryText(s))
	}
	set := verifySet(t, dir)
	snaps := snapshots(t, dir)
	if len(snaps) != 1 || set == nil || len(set.Snapshots) != 1 {
		t.Fatalf("%d snapshots written", len(snaps))
	}
	var rec map[string]any
	for _, b := range snaps {
		rec = readRecord(t, b)
	}
	// The stored request is what was sent upstream (as JSON).
	// Top-level null members are dropped from the stored request (its
	// stored normalization) and Gemini's model comes from the path;
	// everything else is kept as sent.
	var sent, appReq, stored map[string]any
	if err := json.Unmarshal(up.lastReceived(), &sent); err != nil {
		t.Fatal(err)
	}
	storedJSON, _ := json.Marshal(rec["request"])
	_ = json.Unmarshal(storedJSON, &stored)
	_ = json.Unmarshal([]byte(c.request), &appReq)
	if appReq["stream_options"] == nil {
		delete(sent, "stream_options") // include_usage, added to read the tokens
	}
	for _, m := range []map[string]any{sent, appReq} {
		for k, v := range m {
			if v == nil {
				delete(m, k)
			}
		}
		if _, ok := m["model"]; !ok && strings.Contains(c.path, "/models/") {
			m["model"] = stored["model"]
		}
	}
	if !reflect.DeepEqual(stored, appReq) || !reflect.DeepEqual(sent, stored) {
		t.Errorf("stored request\n%s\nis not the application's\n%s", storedJSON, c.request)
	}

	// Replay: a second run answers from the set; the upstream is not asked.
	before := up.count()
	p2 := realityProxy(t, dir, up.Server, dir)
	rr := p2.do(c.path, []byte(c.request), nil)
	if rr.status != 200 {
		t.Fatalf("replay status %d: %s", rr.status, rr.body)
	}
	if up.count() != before {
		t.Fatalf("the replay reached the upstream")
	}
	if s := p2.finish(); s.Failed() {
		t.Fatalf("replay run failed:\n%s", summaryText(s))
	}
	for _, s := range c.replayHas {
		if !strings.Contains(string(rr.body), s) {
			t.Errorf("the replayed answer lacks %s:\n%s", s, rr.body)
		}
	}
	if strings.HasSuffix(c.answer, ".sse") {
		// Event-exact (DESIGN §13.4): the replayed stream is the one the
		// application got when it was recorded, event for event.
		if got, want := sseEvents(t, rr.body), sseEvents(t, r.body); !reflect.DeepEqual(got, want) {
			t.Errorf("the replayed stream's events differ from the recorded ones:\n%q\n%q", got, want)
		}
		if c.exact && !bytes.Equal(rr.body, r.body) {
			// A stream written as the providers write theirs (no comments,
			// one line end) replays byte for byte.
			t.Errorf("the replayed stream is not the recorded one byte for byte:\n%q\n%q", rr.body, r.body)
		}
	}
	return r, rec, rr
}

// sseEvents is a stream's events as "event\x00id\x00data" strings.
func sseEvents(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	var p provider.SSEParser
	if err := p.Feed(b, func(ev provider.SSEEvent) error {
		out = append(out, ev.Name+"\x00"+ev.ID+"\x00"+string(ev.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameJSON fails unless a and b hold the same JSON value.
func sameJSON(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var va, vb any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if err := da.Decode(&va); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, a)
	}
	if err := db.Decode(&vb); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, b)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("%s differs:\n%s\n%s", what, a, b)
	}
}

// TestRealRequestShapesRecord: request shapes the providers accept are
// recorded as sent, verify, and replay — plain and streamed.
func TestRealRequestShapesRecord(t *testing.T) {
	cases := []realityCase{
		{name: "anthropic mid-conversation system message", path: "/v1/messages", answer: "anthropic_answer.json", exact: true,
			request:   `{"model":"claude-sonnet-4-5","max_tokens":64,"temperature":0,"system":"Be brief.","messages":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi! How can I help?"},{"role":"system","content":"From now on, answer in French."},{"role":"user","content":[{"type":"text","text":"Hello again"}]}]}`,
			replayHas: []string{"Bonjour ! Comment puis-je vous aider ?"}},
		{name: "anthropic mid-conversation system message, streamed", path: "/v1/messages", answer: "anthropic_answer.sse", exact: true,
			request:   `{"model":"claude-sonnet-4-5","max_tokens":64,"temperature":0,"stream":true,"messages":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi!"},{"role":"system","content":"From now on, answer in French."},{"role":"user","content":"Hello again"}]}`,
			replayHas: []string{"event: message_stop", "Comment puis-je"}},
		{name: "null-valued optional message members", path: "/v1/chat/completions", answer: "openai_answer.json", exact: true,
			request:   `{"model":"gpt-4o-mini","temperature":0,"max_tokens":64,"seed":7,"tool_choice":null,"user":null,"messages":[{"role":"system","content":"Be brief.","name":null},{"role":"user","content":"Weather in Paris?","name":null,"tool_calls":null},{"role":"assistant","content":null,"name":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"sunny","name":null,"tool_calls":null}]}`,
			replayHas: []string{"It is sunny in Paris."}},
		{name: "null-valued optional message members, streamed", path: "/v1/chat/completions", answer: "openai_usage_added.sse",
			request:   `{"model":"gpt-4o-mini","temperature":0,"max_tokens":64,"seed":7,"stream":true,"stream_options":null,"messages":[{"role":"user","content":"Capital of France?","name":null,"tool_calls":null},{"role":"assistant","content":"Let me think.","name":null,"tool_calls":null,"function_call":null},{"role":"user","content":"Go on.","name":null}]}`,
			replayHas: []string{"Paris."}},
		{name: "mistral content as an array of parts", path: "/v1/chat/completions", answer: "mistral_content_parts.json", exact: true,
			request:   `{"model":"magistral-medium-2509","temperature":0,"max_tokens":256,"seed":7,"safe_prompt":false,"messages":[{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}]}`,
			replayHas: []string{"The user asks for the capital of France.", `"Paris."`}},
		{name: "mistral content parts, streamed", path: "/v1/chat/completions", answer: "mistral_content_parts.sse",
			request:   `{"model":"magistral-medium-2509","temperature":0,"max_tokens":256,"seed":7,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}]}`,
			replayHas: []string{"The user asks for the capital of France.", "Paris."}},
		{name: "gemini tools as one object", path: "/v1beta/models/gemini-2.5-flash:generateContent", answer: "gemini_answer.json", exact: true,
			request:   `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],"tools":{"functionDeclarations":[{"name":"get_weather","description":"Weather for a city","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]},"generationConfig":{"temperature":0,"seed":7,"maxOutputTokens":64}}`,
			replayHas: []string{`"get_weather"`, `"Paris"`}},
		{name: "gemini tools as one object, streamed", path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", answer: "gemini_answer.sse", exact: true,
			request:   `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],"tools":{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]},"generationConfig":{"temperature":0,"seed":7,"maxOutputTokens":64}}`,
			replayHas: []string{`"get_weather"`, `"Paris"`}},
	}
	blocks := `{"model":"claude-sonnet-4-5","max_tokens":1024,"temperature":0,"context_management":{"edits":[{"type":"compact_20260112"}]},"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":1}],"messages":[{"role":"user","content":"When does the Gulbenkian open?"}]}`
	cases = append(cases,
		realityCase{name: "anthropic compaction, thinking, server tool, citations, unknown block", path: "/v1/messages", answer: "anthropic_blocks.json", exact: true,
			request:   blocks,
			replayHas: []string{`"type":"compaction"`, "The user is planning a trip to Lisbon", "EoQBCkYIBxgCKkBzdW1tYXJ5", `"web_search_tool_result"`, `"future_block"`}},
		realityCase{name: "anthropic compaction, thinking, server tool, citations, unknown block, streamed", path: "/v1/messages", answer: "anthropic_blocks.sse", exact: true,
			request:   strings.Replace(blocks, `"temperature":0,`, `"temperature":0,"stream":true,`, 1),
			replayHas: []string{`"type":"compaction_delta","content":"The user is planning a trip to Lisbon`, "EoQBCkYIBxgCKkBzdW1tYXJ5", `"signature_delta"`, `"citations_delta"`, `"web_search_tool_result"`, `"type":"future_block","note":""`}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, rr := runReality(t, c)
			if !strings.HasSuffix(c.answer, ".sse") {
				sameJSON(t, "the replayed answer", r.body, rr.body)
			}
		})
	}
}

// TestNondeterminismIsJudgedOnMeaning (DESIGN §13.3): the same request
// answered twice in one run — under prompt caching the usage differs, and
// ids, timestamps and the spelling of tool arguments change — is one
// answer: the first is kept, nothing is refused, and it replays. An answer
// that says something else is still nondeterminism.
func TestNondeterminismIsJudgedOnMeaning(t *testing.T) {
	openaiReq := `{"model":"gpt-4o-mini","temperature":0,"seed":7,"max_completion_tokens":64,"messages":[{"role":"system","content":"You are a weather bot."},{"role":"user","content":"Weather in Paris, in Celsius?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}}}}}]}`
	anthropicReq := `{"model":"claude-sonnet-4-5","max_tokens":64,"temperature":0,"system":[{"type":"text","text":"Answer from the contract.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"When does the contract end?"}]}`
	for _, c := range []struct {
		name, path, request string
		answers             []string
		nondet              bool
	}{
		{"openai tool call, usage and argument spelling differ", "/v1/chat/completions", openaiReq, []string{"openai_tools_cache_1.json", "openai_tools_cache_2.json"}, false},
		{"anthropic cache write then read", "/v1/messages", anthropicReq, []string{"anthropic_cache_write.json", "anthropic_cache_read.json"}, false},
		{"anthropic answer that says something else", "/v1/messages", anthropicReq, []string{"anthropic_cache_write.json", "anthropic_cache_other.json"}, true},
		{"anthropic stream, then the same stream from the cache", "/v1/messages", strings.Replace(anthropicReq, `"temperature":0,`, `"temperature":0,"stream":true,`, 1), []string{"anthropic_answer.sse", "anthropic_answer_cached.sse"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newRealityUpstream(t, c.answers...)
			dir := filepath.Join(t.TempDir(), ".ai-snapshots")
			p := realityProxy(t, dir, up.Server, "")
			var first reply
			for i, answer := range c.answers {
				r := p.do(c.path, []byte(c.request), nil)
				want, _ := os.ReadFile(filepath.Join("testdata", "reality", answer))
				if r.status != 200 || !bytes.Equal(r.body, want) {
					t.Fatalf("call %d: %d\n%s\nwant the upstream's answer\n%s", i+1, r.status, r.body, want)
				}
				if i == 0 {
					first = r
				}
			}
			s := p.finish()
			if got := hasKind(s, record.KindNondeterminism); got != c.nondet {
				t.Fatalf("nondeterminism reported = %v, want %v:\n%s", got, c.nondet, summaryText(s))
			}
			if c.nondet {
				if !strings.Contains(summaryText(s), `content: "The contract ends on 31 March." → "It ends in March."`) {
					t.Fatalf("the difference is not named:\n%s", summaryText(s))
				}
				return
			}
			if s.Failed() {
				t.Fatalf("run failed:\n%s", summaryText(s))
			}
			verifySet(t, dir)
			snaps := snapshots(t, dir)
			if len(snaps) != 1 {
				t.Fatalf("%d snapshots", len(snaps))
			}
			// The first answer is the one kept, and the one replayed.
			p2 := realityProxy(t, dir, up.Server, dir)
			before := up.count()
			rr := p2.do(c.path, []byte(c.request), nil)
			if rr.status != 200 || up.count() != before {
				t.Fatalf("replay: %d (upstream asked: %v)", rr.status, up.count() != before)
			}
			p2.finish()
			if strings.HasSuffix(c.answers[0], ".sse") {
				if first, replayed := sseData(first.body), sseData(rr.body); len(replayed) == 0 || !strings.Contains(strings.Join(replayed, ""), "Comment puis-je") || len(first) == 0 {
					t.Fatalf("replayed stream:\n%s", rr.body)
				}
				return
			}
			sameJSON(t, "the replayed answer", first.body, rr.body)
		})
	}
}

// TestUsageSentUnaskedReachesTheApplication (DESIGN §13.3): traceforge
// adds stream_options.include_usage to read the tokens and removes from
// the application's view only what that caused; usage the provider sends
// anyway — Groq's on its last chunk (top-level and in x_groq), the
// servers behind the Hugging Face router on theirs — reaches the
// application byte for byte and is stored; x_groq replays.
func TestUsageSentUnaskedReachesTheApplication(t *testing.T) {
	for _, c := range []realityCase{
		{name: "groq", path: "/v1/chat/completions", answer: "groq_usage_unasked.sse", exact: true,
			request:   `{"model":"llama-3.3-70b-versatile","temperature":0,"seed":7,"max_completion_tokens":64,"stream":true,"messages":[{"role":"user","content":"Capital of France?"}]}`,
			replayHas: []string{"capital of ", `"x_groq":{"id":"req_01kf0a1b2c3d4e5f6g7h8j9k0m","usage":{"queue_time":0.047`}},
		{name: "together, 64-bit seed in the stream", path: "/v1/chat/completions", answer: "together_seed_64bit.sse",
			request:   `{"model":"meta-llama/Llama-3.3-70B-Instruct-Turbo","temperature":0,"seed":7,"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Capital of France? One word."}]}`,
			replayHas: []string{`"seed":17212412409712741000`, `"content":"Paris"`}},
		{name: "hugging face router", path: "/v1/chat/completions", answer: "hf_router_usage_unasked.sse", exact: true,
			request:   `{"model":"meta-llama/Llama-3.3-70B-Instruct","temperature":0,"seed":7,"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Capital of France? One word."}]}`,
			replayHas: []string{`"content":"Paris"`, `"seed":4527391856213497`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, rec, _ := runReality(t, c)
			if !strings.Contains(string(r.body), `"usage":{"`) {
				t.Fatalf("the application did not get the provider's usage:\n%s", r.body)
			}
			// A stream is stored as its events, no body: the usage is in the
			// derived fields and in the events as sent.
			resp := rec["response"].(map[string]any)
			if _, ok := resp["usage"].(map[string]any); !ok {
				t.Fatalf("the stored answer has no usage: %v", resp)
			}
			if _, ok := resp["body"]; ok {
				t.Fatalf("a stream stored as its events also stores a body")
			}
			if wire, _ := json.Marshal(resp["wire"]); !strings.Contains(string(wire), `\"usage\":{`) {
				t.Fatalf("the stored events lack the usage: %s", wire)
			}
		})
	}
}

// TestUsageAddedByTraceforgeStaysOut: the usage-only chunk and the null
// usage members that include_usage causes are still removed from the
// stream of an application that did not ask for them.
func TestUsageAddedByTraceforgeStaysOut(t *testing.T) {
	r, rec, rr := runReality(t, realityCase{name: "openai", path: "/v1/chat/completions", answer: "openai_usage_added.sse",
		request:   `{"model":"gpt-4o-mini","temperature":0,"seed":7,"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Capital of France?"}]}`,
		replayHas: []string{"Paris."}})
	for _, b := range [][]byte{r.body, rr.body} {
		if strings.Contains(string(b), `"usage"`) {
			t.Fatalf("usage the application did not ask for:\n%s", b)
		}
	}
	if rec["response"].(map[string]any)["tokens_used"] == nil {
		t.Fatal("no tokens stored")
	}
}

// TestAnswerBeyondJCSIsKeptAsText (DESIGN §13.3, §13.4): a 200 answer
// holding an integer beyond 2^53 (Together's and the Hugging Face
// router's 64-bit seed) is not refused: the snapshot keeps the body as
// text in response.wire, its fields are read from it, it verifies, and
// replay sends the text byte for byte.
func TestAnswerBeyondJCSIsKeptAsText(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "reality", "together_seed_64bit.json"))
	if err != nil {
		t.Fatal(err)
	}
	req := `{"model":"meta-llama/Llama-3.3-70B-Instruct-Turbo","temperature":0,"seed":7,"max_tokens":64,"messages":[{"role":"user","content":"Capital of France? One word."}]}`
	r, rec, rr := runReality(t, realityCase{name: "together", path: "/v1/chat/completions", answer: "together_seed_64bit.json", exact: true, request: req})
	resp := rec["response"].(map[string]any)
	if resp["wire"] != string(want) || resp["body"] != nil {
		t.Fatalf("stored response: wire %q, body %v", resp["wire"], resp["body"])
	}
	if resp["content"] != "Paris." || resp["finish_reason"] != "stop" {
		t.Fatalf("fields %v", resp)
	}
	if !bytes.Equal(r.body, want) || !bytes.Equal(rr.body, want) {
		t.Fatalf("recorded\n%s\nreplayed\n%s\nwant\n%s", r.body, rr.body, want)
	}
	if rr.header.Get(provider.HeaderSynthesized) != "" {
		t.Fatal("the replayed text is marked synthesized")
	}
	// Streamed, the same snapshot is synthesized from its fields.
	up := newRealityUpstream(t, "together_seed_64bit.json")
	dir := filepath.Join(t.TempDir(), ".ai-snapshots")
	p := realityProxy(t, dir, up.Server, "")
	p.do("/v1/chat/completions", []byte(req), nil)
	if s := p.finish(); s.Failed() {
		t.Fatalf("%s", summaryText(s))
	}
	p2 := realityProxy(t, dir, up.Server, dir)
	sr := p2.do("/v1/chat/completions", []byte(strings.Replace(req, `"temperature":0,`, `"temperature":0,"stream":true,`, 1)), nil)
	p2.finish()
	if sr.status != 200 || !strings.Contains(string(sr.body), "Paris.") || up.count() != 1 {
		t.Fatalf("streamed replay: %d (upstream asked %d times)\n%s", sr.status, up.count(), sr.body)
	}
}
