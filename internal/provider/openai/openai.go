// Package openai is the OpenAI provider's descriptor: OpenAI and every
// OpenAI-compatible server (vLLM, gateways, Groq, …). Its wire formats are
// the sub-packages chat, completions, responses and embeddings.
package openai

import (
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/openai/chat"
	"github.com/traceforge/traceforge/internal/provider/openai/completions"
	"github.com/traceforge/traceforge/internal/provider/openai/embeddings"
	"github.com/traceforge/traceforge/internal/provider/openai/responses"
)

// Descriptor describes OpenAI (DESIGN §13.1). The base URLs carry /v1
// (OPENAI_BASE_URL=http://127.0.0.1:PORT/v1, https://api.openai.com/v1).
var Descriptor = &provider.Descriptor{
	Name:              provider.OpenAI,
	Title:             "OpenAI",
	Family:            provider.FamilyOpenAI,
	Since:             "1.0.0",
	Formats:           []provider.Format{chat.New(), completions.New(), responses.New(), embeddings.New()},
	UpstreamHelp:      "OpenAI or OpenAI-compatible base URL, with its /v1",
	DefaultUpstream:   "https://api.openai.com/v1",
	VersionPrefix:     "/v1",
	BaseURLEnv:        "OPENAI_BASE_URL",
	KeyEnv:            []string{"OPENAI_API_KEY"},
	ReplayKeyEnv:      "OPENAI_API_KEY",
	LiveAuth:          func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) },
	CredentialHeaders: []string{"OpenAI-Organization", "OpenAI-Project"},
	// gitleaks' rule.
	SecretRules: []provider.SecretRule{{Name: "openai-api-key", Prefix: "sk-",
		Pattern: `\b(?:sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})`}},
	Clients:   []provider.Client{{Match: []string{"agents/javascript", "openai-agents"}, Name: "the OpenAI Agents SDK", Lang: provider.LangNode}},
	GoModules: []string{"github.com/openai/openai-go", "github.com/sashabaranov/go-openai"},
	Usage:     usage,
}

// usage: chat, completions and embeddings count prompt_tokens and
// completion_tokens; Responses input_tokens and output_tokens; both have
// total_tokens.
func usage(endpoint string, c map[string]int64) (provider.TokenUsage, bool) {
	switch {
	case strings.HasSuffix(endpoint, "/v1/responses") && provider.Has(c, "input_tokens", "output_tokens"): // also a named upstream's /u/NAME/v1/responses
		return provider.TokenUsage{Input: c["input_tokens"], Output: c["output_tokens"], Split: true}.WithTotal(c, "total_tokens"), true
	case provider.Has(c, "prompt_tokens", "completion_tokens"):
		return provider.TokenUsage{Input: c["prompt_tokens"], Output: c["completion_tokens"], Split: true}.WithTotal(c, "total_tokens"), true
	}
	return provider.TokenUsage{}, false
}
