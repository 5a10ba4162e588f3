// Package anthropic is the Anthropic provider's descriptor; its wire format
// is the sub-package messages.
package anthropic

import (
	"net/http"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/anthropic/messages"
)

// DefaultVersion is sent to Anthropic by --live when a snapshot stores no
// anthropic-version header (the API requires one). It is not part of the
// key of such a snapshot, so sending it changes nothing traceforge compares.
const DefaultVersion = "2023-06-01"

// Descriptor describes Anthropic (DESIGN §13.1). The SDKs append
// /v1/messages to ANTHROPIC_BASE_URL, which carries no version.
var Descriptor = &provider.Descriptor{
	Name:            provider.Anthropic,
	Title:           "Anthropic",
	Family:          provider.FamilyAnthropic,
	Since:           "1.0.0",
	KeyHeaders:      []string{"anthropic-version"},
	Formats:         []provider.Format{messages.New()},
	UpstreamHelp:    "Anthropic base URL, without /v1",
	DefaultUpstream: "https://api.anthropic.com",
	BaseURLEnv:      "ANTHROPIC_BASE_URL",
	KeyEnv:          []string{"ANTHROPIC_API_KEY"},
	ReplayKeyEnv:    "ANTHROPIC_API_KEY",
	LiveAuth: func(h http.Header, key string) {
		h.Set("x-api-key", key)
		if h.Get("anthropic-version") == "" {
			h.Set("anthropic-version", DefaultVersion)
		}
	},
	CredentialHeaders: []string{"X-Api-Key"},
	// gitleaks' rules.
	SecretRules: []provider.SecretRule{
		{Name: "anthropic-api-key", Prefix: "sk-", Pattern: `\bsk-ant-api03-[a-zA-Z0-9_\-]{93}AA`},
		{Name: "anthropic-admin-api-key", Prefix: "sk-", Pattern: `\bsk-ant-admin01-[a-zA-Z0-9_\-]{93}AA`},
	},
	GoModules: []string{"github.com/anthropics/anthropic-sdk-go"},
	Usage:     usage,
}

// usage: input_tokens excludes the cache reads and writes, listed apart;
// the total is all four.
func usage(_ string, c map[string]int64) (provider.TokenUsage, bool) {
	if !provider.Has(c, "input_tokens", "output_tokens") {
		return provider.TokenUsage{}, false
	}
	return provider.TokenUsage{Input: c["input_tokens"], Output: c["output_tokens"],
		CacheRead: c["cache_read_input_tokens"], CacheWrite: c["cache_creation_input_tokens"], Split: true}.WithTotal(c, ""), true
}
