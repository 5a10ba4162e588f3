package ledger_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	goldenpkg "github.com/traceforge/traceforge/internal/golden"

	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/snapshottest"
	"github.com/traceforge/traceforge/internal/source"
)

// fixtureDir is the committed set the golden tests and the CLI scripts
// read: a three-turn conversation with a fork, an Anthropic tool loop with
// cache tokens, a streamed call, a call whose parent is missing and a call
// with only tokens_used.
const fixtureDir = "../../testdata/ledger/conversations/.ai-snapshots"

func at(min int) time.Time { return snapshottest.BaseTime.Add(time.Duration(min) * time.Minute) }

func oa(messages []any, content string, in, out int64, latency int64, t time.Time) snapshottest.Item {
	return snapshottest.Item{
		Provider: "openai",
		Request: map[string]any{
			"model": "gpt-4o-mini", "temperature": 0, "seed": 42, "max_tokens": 200,
			"messages": append([]any{map[string]any{"role": "system", "content": "You are a travel agent."}}, messages...),
		},
		Response: snapshot.Response{
			Fields: snapshot.Fields{
				Content: content, TokensUsed: in + out, FinishReason: "stop",
				Usage: map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
				Model: "gpt-4o-mini-2024-07-18",
			},
			LatencyMS: latency,
		},
		Source: source.Source{File: "app/travel.py", Line: 20, Function: "chat"},
		Time:   t,
	}
}

func user(s string) any      { return map[string]any{"role": "user", "content": s} }
func assistant(s string) any { return map[string]any{"role": "assistant", "content": s} }

var weatherTool = []any{map[string]any{"name": "get_weather", "description": "Current weather for a city",
	"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}

func anth(messages []any, content string, toolCalls []any, finish string, usage map[string]any, latency int64, t time.Time) snapshottest.Item {
	var total int64
	for _, v := range usage {
		n, _ := snapshot.Int64(v)
		total += n
	}
	return snapshottest.Item{
		Provider: "anthropic",
		Request: map[string]any{
			"model": "claude-sonnet-4-5", "max_tokens": 512, "temperature": 0,
			"system": "Use the tools.", "tools": weatherTool, "messages": messages,
		},
		Headers: map[string]any{"anthropic-version": "2023-06-01"},
		Response: snapshot.Response{
			Fields: snapshot.Fields{
				Content: content, ToolCalls: toolCalls, TokensUsed: total, FinishReason: finish,
				Usage: usage, Model: "claude-sonnet-4-5-20250929",
			},
			LatencyMS: latency, Stream: true,
		},
		Source: source.Source{File: "agent/weather.ts", Line: 31, Function: "runAgent"},
		Time:   t,
	}
}

// fixtureItems is the set behind fixtureDir.
func fixtureItems() []snapshottest.Item {
	toolUse := map[string]any{"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": map[string]any{"city": "Paris"}}
	noTokensBreakdown := oa([]any{user("Say hi")}, "Hi!", 0, 0, 90, at(30))
	noTokensBreakdown.Response.Usage, noTokensBreakdown.Response.TokensUsed = nil, 12
	noTokensBreakdown.Source = source.Source{File: "app/greet.py", Line: 5, Function: "greet"}
	return []snapshottest.Item{
		// Conversation: three turns, forked after the first answer.
		oa([]any{user("Plan a weekend trip")}, "Where would you like to go?", 100, 10, 400, at(0)),
		oa([]any{user("Plan a weekend trip"), assistant("Where would you like to go?"), user("Paris")},
			"Paris in spring is lovely: the Louvre on Saturday, Montmartre on Sunday.", 130, 20, 500, at(1)),
		oa([]any{user("Plan a weekend trip"), assistant("Where would you like to go?"), user("Paris"),
			assistant("Paris in spring is lovely: the Louvre on Saturday, Montmartre on Sunday."), user("Hotels?")},
			"Try a small hotel in the Marais.", 170, 12, 600, at(2)),
		oa([]any{user("Plan a weekend trip"), assistant("Where would you like to go?"), user("Rome")},
			"Rome: the Colosseum, then Trastevere for dinner.", 130, 15, 450, at(3)),
		// Tool loop: the answer calls get_weather, the next turn returns its result.
		anth([]any{user("What is the weather in Paris?")}, "", []any{toolUse}, "tool_use",
			map[string]any{"input_tokens": 300, "output_tokens": 40, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 200}, 800, at(10)),
		anth([]any{user("What is the weather in Paris?"),
			map[string]any{"role": "assistant", "content": []any{toolUse}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny, 21°C"}}}},
			"It is sunny in Paris, 21°C.", nil, "end_turn",
			map[string]any{"input_tokens": 350, "output_tokens": 25, "cache_read_input_tokens": 1000}, 700, at(11)),
		// A follow-up whose first turn was never recorded.
		oa([]any{user("Translate 'hello'"), assistant("Bonjour"), user("And in Italian?")}, "Ciao", 60, 3, 300, at(20)),
		noTokensBreakdown,
	}
}

// TestGenerateFixture writes fixtureDir (with -update) and otherwise checks
// that the committed files are exactly what fixtureItems builds.
func TestGenerateFixture(t *testing.T) {
	items := fixtureItems()
	if goldenpkg.Update() {
		os.RemoveAll(fixtureDir)
		if _, err := snapshottest.WriteSet(fixtureDir, items...); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range items {
		rel, want, err := snapshottest.File(it)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(fixtureDir, filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale or missing (%v): run go test ./internal/ledger -run TestGenerateFixture -update", rel, err)
		}
	}
}
