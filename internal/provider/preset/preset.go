// Package preset holds the request-defaults presets `traceforge init`
// writes into .traceforge.json (DESIGN §13.2), and the rule a refusal for a
// missing field proposes. It is wire knowledge: which member each endpoint
// uses for temperature, seed and the token limit, and which models accept
// only their default sampling.
//
// Two presets:
//   - Deterministic (the default): temperature 0 and a seed where the API
//     has them, a max-tokens value under the field each endpoint uses. Models
//     that accept only their default sampling get the accepted value plus a
//     policy exception: OpenAI reasoning models (o1, o3, o4, gpt-5 families:
//     temperature only 1) and Claude with extended thinking (temperature
//     must be 1 when thinking is enabled). Reasoning models on the Responses
//     API reject temperature altogether, so no value is set for them there.
//   - Provider: the provider's own documented default values (temperature
//     1 on OpenAI, Anthropic and Gemini, 0.8 on Ollama, 0.7 on Mistral), so
//     that every call behaves as without the field, with the determinism
//     rule relaxed by one explicit exception for every model.
//
// Rules are in match order: specific globs first, "*" last.
package preset

import (
	"fmt"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/snapshot"
)

// Kind names a preset (init --defaults).
type Kind string

// The presets.
const (
	Deterministic Kind = "deterministic"
	Provider      Kind = "provider"
)

// Kinds lists the presets, the default first.
var Kinds = []Kind{Deterministic, Provider}

// Rule is one "defaults" entry.
type Rule struct {
	Model    string
	Endpoint string
	When     map[string]any
	Set      map[string]any
}

// Exception is one "exceptions" entry.
type Exception struct {
	Model       string
	When        map[string]any
	Relax       []string
	LiveCompare []string
}

// Preset is what init writes: the defaults and the exceptions they need.
type Preset struct {
	Kind       Kind
	Defaults   []Rule
	Exceptions []Exception
}

// Endpoints of the rules (key endpoints; Gemini's names its model, hence a
// glob).
const (
	chat        = "/v1/chat/completions"
	completions = "/v1/completions"
	responses   = "/v1/responses"
	messages    = "/v1/messages"
	gemini      = "*:generateContent"
	ollamaChat  = "/api/chat"
	ollamaGen   = "/api/generate"
	// Bedrock's Converse and InvokeModel (Anthropic's body): the model id
	// is in the path.
	bedrockConverse = "/model/*/converse"
	bedrockInvoke   = "/model/*/invoke"
	// Claude on Vertex AI (Anthropic's body; the model is in the path) and
	// Azure OpenAI (OpenAI's bodies; the deployment and api-version are in
	// the endpoint).
	vertexClaude     = "*/publishers/anthropic/models/*:rawPredict"
	azureChat        = "/openai/*/chat/completions*"
	azureCompletions = "/openai/deployments/*/completions*"
	azureResponses   = "/openai/v1/responses*"
)

// Seed is the seed the deterministic preset sets.
const Seed = 42

// reasoning are the OpenAI reasoning model families: temperature only 1
// (the default), max tokens counted with the reasoning.
var reasoning = []string{"o1*", "o3*", "o4*", "gpt-5*"}

// thinking is the condition of Claude's extended thinking.
var thinking = map[string]any{"/thinking/type": "enabled"}

// mistral matches Mistral's models (mistral-*, codestral-*, magistral-*,
// devstral-*, ministral-*): max_tokens, and random_seed for the seed.
const mistral = "*stral*"

// Get returns the preset of kind; false for an unknown kind.
func Get(kind Kind) (Preset, bool) {
	switch kind {
	case Deterministic:
		return deterministic(), true
	case Provider:
		return provider(), true
	}
	return Preset{}, false
}

func deterministic() Preset {
	p := Preset{Kind: Deterministic}
	add := func(model, endpoint string, set map[string]any) {
		p.Defaults = append(p.Defaults, Rule{Model: model, Endpoint: endpoint, Set: set})
	}
	for _, m := range reasoning {
		add(m, chat, map[string]any{"/temperature": 1, "/max_completion_tokens": 32768})
	}
	add(mistral, chat, map[string]any{"/temperature": 0, "/random_seed": Seed, "/max_tokens": 4096})
	add("*/*", chat, map[string]any{"/temperature": 0, "/seed": Seed, "/max_tokens": 4096})
	add("*", chat, map[string]any{"/temperature": 0, "/seed": Seed, "/max_completion_tokens": 4096})
	add("*", completions, map[string]any{"/temperature": 0, "/seed": Seed, "/max_tokens": 16})
	for _, m := range reasoning {
		add(m, responses, map[string]any{"/max_output_tokens": 32768})
	}
	add("*", responses, map[string]any{"/temperature": 0, "/max_output_tokens": 4096})
	p.Defaults = append(p.Defaults, Rule{Model: "*", Endpoint: messages, When: thinking, Set: map[string]any{"/temperature": 1, "/max_tokens": 16384}})
	add("*", messages, map[string]any{"/temperature": 0, "/max_tokens": 4096})
	p.Defaults = append(p.Defaults, Rule{Model: "*", Endpoint: vertexClaude, When: thinking, Set: map[string]any{"/temperature": 1, "/max_tokens": 16384}})
	add("*", vertexClaude, map[string]any{"/temperature": 0, "/max_tokens": 4096})
	for _, m := range reasoning {
		add(m, azureChat, map[string]any{"/temperature": 1, "/max_completion_tokens": 32768})
		add(m, azureResponses, map[string]any{"/max_output_tokens": 32768})
	}
	add("*", azureChat, map[string]any{"/temperature": 0, "/seed": Seed, "/max_completion_tokens": 4096})
	add("*", azureCompletions, map[string]any{"/temperature": 0, "/seed": Seed, "/max_tokens": 16})
	add("*", azureResponses, map[string]any{"/temperature": 0, "/max_output_tokens": 4096})
	add("*", gemini, map[string]any{"/generationConfig/temperature": 0, "/generationConfig/seed": Seed, "/generationConfig/maxOutputTokens": 8192})
	add("*", bedrockConverse, map[string]any{"/inferenceConfig/temperature": 0, "/inferenceConfig/maxTokens": 4096})
	add("*", bedrockInvoke, map[string]any{"/temperature": 0, "/max_tokens": 4096})
	for _, e := range []string{ollamaChat, ollamaGen} {
		add("*", e, map[string]any{"/options/temperature": 0, "/options/seed": Seed, "/options/num_predict": 4096})
	}
	for _, m := range reasoning {
		p.Exceptions = append(p.Exceptions, Exception{Model: m, Relax: []string{"temperature", "seed"}, LiveCompare: []string{"finish_reason", "tool_names"}})
	}
	p.Exceptions = append(p.Exceptions,
		Exception{Model: "*", When: thinking, Relax: []string{"temperature"}, LiveCompare: []string{"finish_reason", "tool_names"}},
		Exception{Model: mistral, Relax: []string{"seed"}})
	return p
}

func provider() Preset {
	p := Preset{Kind: Provider}
	add := func(model, endpoint string, set map[string]any) {
		p.Defaults = append(p.Defaults, Rule{Model: model, Endpoint: endpoint, Set: set})
	}
	limits := []struct {
		model string
		max   int
	}{{"o1*", 32768}, {"o3*", 100000}, {"o4*", 100000}, {"gpt-5*", 128000}, {"gpt-4.1*", 32768}, {"gpt-4o*", 16384}}
	for _, l := range limits {
		add(l.model, chat, map[string]any{"/temperature": 1, "/max_completion_tokens": l.max})
	}
	add(mistral, chat, map[string]any{"/temperature": 0.7, "/max_tokens": 4096})
	add("*/*", chat, map[string]any{"/temperature": 1, "/max_tokens": 4096})
	add("*", chat, map[string]any{"/temperature": 1, "/max_completion_tokens": 4096})
	add("*", completions, map[string]any{"/temperature": 1, "/max_tokens": 16})
	for _, l := range limits {
		set := map[string]any{"/temperature": 1, "/max_output_tokens": l.max}
		if isReasoning(l.model) {
			delete(set, "/temperature")
		}
		add(l.model, responses, set)
	}
	add("*", responses, map[string]any{"/temperature": 1, "/max_output_tokens": 4096})
	add("*", messages, map[string]any{"/temperature": 1, "/max_tokens": 4096})
	add("*", vertexClaude, map[string]any{"/temperature": 1, "/max_tokens": 4096})
	for _, l := range limits {
		add(l.model, azureChat, map[string]any{"/temperature": 1, "/max_completion_tokens": l.max})
	}
	add("*", azureChat, map[string]any{"/temperature": 1, "/max_completion_tokens": 4096})
	add("*", azureCompletions, map[string]any{"/temperature": 1, "/max_tokens": 16})
	for _, l := range limits {
		set := map[string]any{"/temperature": 1, "/max_output_tokens": l.max}
		if isReasoning(l.model) {
			delete(set, "/temperature")
		}
		add(l.model, azureResponses, set)
	}
	add("*", azureResponses, map[string]any{"/temperature": 1, "/max_output_tokens": 4096})
	add("gemini-2.5*", gemini, map[string]any{"/generationConfig/temperature": 1, "/generationConfig/maxOutputTokens": 65536})
	add("*", gemini, map[string]any{"/generationConfig/temperature": 1, "/generationConfig/maxOutputTokens": 8192})
	// Claude's default temperature is 1 on Bedrock as on Anthropic's API;
	// other Bedrock models' defaults differ per model and are not guessed.
	add("*anthropic.*", bedrockConverse, map[string]any{"/inferenceConfig/temperature": 1, "/inferenceConfig/maxTokens": 4096})
	add("*", bedrockInvoke, map[string]any{"/temperature": 1, "/max_tokens": 4096})
	for _, e := range []string{ollamaChat, ollamaGen} {
		add("*", e, map[string]any{"/options/temperature": 0.8, "/options/num_predict": 4096})
	}
	p.Exceptions = []Exception{{Model: "*", Relax: []string{"temperature", "seed"}, LiveCompare: []string{"finish_reason", "tool_names"}}}
	return p
}

func isReasoning(model string) bool {
	for _, m := range reasoning {
		if m == model {
			return true
		}
	}
	return false
}

// DefaultsJSON is the preset's "defaults" array as .traceforge.json holds
// it: one rule per line, members in a fixed order, values as JCS writes
// them. indent prefixes every line.
func (p Preset) DefaultsJSON(indent string) string {
	var lines []string
	for _, r := range p.Defaults {
		parts := []string{kv("model", r.Model)}
		if r.Endpoint != "" {
			parts = append(parts, kv("endpoint", r.Endpoint))
		}
		if r.When != nil {
			parts = append(parts, `"when": `+object(r.When))
		}
		parts = append(parts, `"set": `+object(r.Set))
		lines = append(lines, indent+"  {"+strings.Join(parts, ", ")+"}")
	}
	return "[\n" + strings.Join(lines, ",\n") + "\n" + indent + "]"
}

// ExceptionsJSON is the preset's "exceptions" array (see DefaultsJSON).
func (p Preset) ExceptionsJSON(indent string) string {
	var lines []string
	for _, e := range p.Exceptions {
		parts := []string{kv("model", e.Model)}
		if e.When != nil {
			parts = append(parts, `"when": `+object(e.When))
		}
		parts = append(parts, `"relax": `+list(e.Relax))
		if len(e.LiveCompare) > 0 {
			parts = append(parts, `"live_compare": `+list(e.LiveCompare))
		}
		lines = append(lines, indent+"  {"+strings.Join(parts, ", ")+"}")
	}
	return "[\n" + strings.Join(lines, ",\n") + "\n" + indent + "]"
}

func kv(k, v string) string { return snapshot.CanonicalText(k) + ": " + snapshot.CanonicalText(v) }

func list(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = snapshot.CanonicalText(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// object writes m with its members sorted (JCS order for these ASCII
// pointers).
func object(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = snapshot.CanonicalText(k) + ": " + value(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func value(v any) string {
	switch n := v.(type) {
	case int:
		return fmt.Sprint(n)
	case float64:
		return fmt.Sprint(n)
	}
	return snapshot.CanonicalText(v)
}
