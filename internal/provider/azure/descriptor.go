package azure

import (
	"net/http"

	"github.com/traceforge/traceforge/internal/provider"
)

// Descriptor describes Azure OpenAI (DESIGN §13.5). The SDKs' AzureOpenAI
// clients read AZURE_OPENAI_ENDPOINT (the resource's URL, no path) and add
// /openai/… themselves. There is no default upstream: every resource has
// its own host, so --azure-upstream (or AZURE_OPENAI_ENDPOINT already set
// for traceforge) is required as soon as an Azure call arrives. Its routes
// are asked before every other provider's: they end like OpenAI's, whose
// formats take any prefix.
var Descriptor = &provider.Descriptor{
	Name:         Name,
	Title:        "Azure OpenAI",
	Family:       provider.FamilyAzure,
	Since:        "1.2.0",
	RoutesFirst:  true,
	Formats:      []provider.Format{NewChat(), NewCompletions(), Embeddings{}, Responses{}},
	UpstreamHelp: "Azure OpenAI resource URL, without a path (https://NAME.openai.azure.com); required for Azure calls",
	BaseURLEnv:   "AZURE_OPENAI_ENDPOINT",
	KeyEnv:       []string{"AZURE_OPENAI_API_KEY"},
	ReplayKeyEnv: "AZURE_OPENAI_API_KEY",
	LiveAuth:     func(h http.Header, key string) { h.Set("api-key", key) },
	// api-key is everyone's credential header already.
	Usage: usage,
}

// usage: chat, completions and embeddings count prompt_tokens and
// completion_tokens; Responses input_tokens and output_tokens; both have
// total_tokens.
func usage(_ string, c map[string]int64) (provider.TokenUsage, bool) {
	switch {
	case provider.Has(c, "input_tokens", "output_tokens"):
		return provider.TokenUsage{Input: c["input_tokens"], Output: c["output_tokens"], Split: true}.WithTotal(c, "total_tokens"), true
	case provider.Has(c, "prompt_tokens", "completion_tokens"):
		return provider.TokenUsage{Input: c["prompt_tokens"], Output: c["completion_tokens"], Split: true}.WithTotal(c, "total_tokens"), true
	}
	return provider.TokenUsage{}, false
}
