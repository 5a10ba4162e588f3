package gemini

import (
	"net/http"

	"github.com/traceforge/traceforge/internal/provider"
)

// Descriptor describes the Gemini API (DESIGN §13.1). The SDKs put the
// version (v1beta, v1, v1alpha) after GOOGLE_GEMINI_BASE_URL themselves;
// the key travels as x-goog-api-key or the key= query parameter.
var Descriptor = &provider.Descriptor{
	Name:            provider.Gemini,
	Title:           "Gemini",
	Family:          provider.FamilyGoogle,
	Since:           "1.1.0",
	Formats:         []provider.Format{NewGenerate(), NewEmbed()},
	UpstreamHelp:    "Gemini API base URL, without a version",
	DefaultUpstream: "https://generativelanguage.googleapis.com",
	BaseURLEnv:      "GOOGLE_GEMINI_BASE_URL",
	// The SDKs read GOOGLE_API_KEY first, then GEMINI_API_KEY (and warn
	// when both are set): one placeholder in replay, only when neither is.
	KeyEnv:            []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"},
	ReplayKeyEnv:      "GEMINI_API_KEY",
	LiveAuth:          func(h http.Header, key string) { h.Set("x-goog-api-key", key) },
	CredentialHeaders: []string{"X-Goog-Api-Key"},
	// gitleaks' gcp-api-key: the Gemini API's keys.
	SecretRules: []provider.SecretRule{{Name: "gcp-api-key", Prefix: "AIza", Pattern: `\bAIza[\w-]{35}`}},
	// google-genai-sdk/… also contains "ai-sdk/": checked first.
	Clients: []provider.Client{
		{Match: []string{"gl-node"}, Name: "@google/genai", Lang: provider.LangNode},
		{Match: []string{"gl-python"}, Name: "google-genai (Python)", Lang: provider.LangPython},
		{Match: []string{"gl-go"}, Name: "a Go client", Lang: provider.LangGo},
	},
	GoModules: []string{"google.golang.org/genai"},
	Usage:     usage,
}

// usage: the output counts the thinking tokens too.
func usage(_ string, c map[string]int64) (provider.TokenUsage, bool) {
	if !provider.Has(c, "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount") {
		return provider.TokenUsage{}, false
	}
	return provider.TokenUsage{Input: c["promptTokenCount"], Output: c["candidatesTokenCount"] + c["thoughtsTokenCount"], Split: true}.WithTotal(c, "totalTokenCount"), true
}
