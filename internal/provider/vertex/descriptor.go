package vertex

import (
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// LocationPlaceholder stands, in an upstream URL's host, for the location
// of each call (its path's locations/{location}).
const LocationPlaceholder = "{location}"

// Descriptor describes Vertex AI (DESIGN §13.5). google-genai (Python, Node,
// Go) reads GOOGLE_VERTEX_BASE_URL and puts the version after it;
// Anthropic's Vertex clients (AnthropicVertex, @anthropic-ai/vertex-sdk)
// read ANTHROPIC_VERTEX_BASE_URL, which ends in /v1. The default upstream
// is the called location's regional host (global: aiplatform.googleapis.com;
// express mode's paths name no location and go there too).
var Descriptor = &provider.Descriptor{
	Name:            Name,
	Title:           "Vertex AI",
	Family:          provider.FamilyGoogle,
	Since:           "1.2.0",
	Formats:         []provider.Format{Generate{}, Embed{}, CountTokens{}, Predict{}, RawPredict{}},
	UpstreamHelp:    "Vertex AI base URL, without a version (" + LocationPlaceholder + ": the location in the called path; global → https://aiplatform.googleapis.com)",
	DefaultUpstream: "https://" + LocationPlaceholder + "-aiplatform.googleapis.com",
	BaseURLEnv:      "GOOGLE_VERTEX_BASE_URL",
	MoreBaseURLEnv:  []provider.BaseURLVar{{Name: "ANTHROPIC_VERTEX_BASE_URL", Path: "/v1"}},
	// --live sends an OAuth access token (gcloud auth print-access-token)
	// as a bearer token, or an express-mode API key as x-goog-api-key.
	KeyEnv: []string{"GOOGLE_CLOUD_ACCESS_TOKEN", "GOOGLE_API_KEY"},
	LiveAuth: func(h http.Header, key string) {
		if strings.HasPrefix(key, "AIza") {
			h.Set("x-goog-api-key", key)
			return
		}
		h.Set("Authorization", "Bearer "+key)
	},
	PrepareUpstream:   prepareUpstream,
	CredentialHeaders: []string{"X-Goog-Api-Key"},
	// Google OAuth 2.0 access tokens (the API keys' rule is the Gemini
	// API's, gcp-api-key).
	SecretRules: []provider.SecretRule{{Name: "gcp-oauth-access-token", Prefix: "ya29.", Pattern: `\bya29\.[0-9A-Za-z_\-]{20,}`}},
	Usage:       usage,
}

// Host is the host of the default upstream for a location: global →
// aiplatform.googleapis.com, the multi-regions us and eu →
// aiplatform.{us,eu}.rep.googleapis.com (as google-genai picks them), any
// other → {location}-aiplatform.googleapis.com.
func Host(location string) string {
	switch location {
	case "", "global":
		return "aiplatform.googleapis.com"
	case "us", "eu":
		return "aiplatform." + location + ".rep.googleapis.com"
	}
	return location + "-aiplatform.googleapis.com"
}

// ExpandHost fills the location of the called path into an upstream host
// holding LocationPlaceholder: the default's host becomes Host(location);
// any other host gets the location in place of the placeholder. A host
// without it is returned as it is.
func ExpandHost(host, path string) string {
	if !strings.Contains(host, LocationPlaceholder) {
		return host
	}
	loc := Location(path)
	if host == LocationPlaceholder+"-aiplatform.googleapis.com" {
		return Host(loc)
	}
	return strings.ReplaceAll(host, LocationPlaceholder, loc)
}

// prepareUpstream points a call at its location's host
// (ExpandHost).
func prepareUpstream(out *http.Request, _ []byte) error {
	out.URL.Host = ExpandHost(out.URL.Host, out.URL.Path)
	return nil
}

// usage reads both wires' counters: Gemini's usageMetadata (the output
// counts the thinking tokens too) and Anthropic's usage (input_tokens
// excludes the cache reads and writes, listed apart).
func usage(_ string, c map[string]int64) (provider.TokenUsage, bool) {
	switch {
	case provider.Has(c, "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount"):
		return provider.TokenUsage{Input: c["promptTokenCount"], Output: c["candidatesTokenCount"] + c["thoughtsTokenCount"], Split: true}.WithTotal(c, "totalTokenCount"), true
	case provider.Has(c, "input_tokens", "output_tokens"):
		return provider.TokenUsage{Input: c["input_tokens"], Output: c["output_tokens"],
			CacheRead: c["cache_read_input_tokens"], CacheWrite: c["cache_creation_input_tokens"], Split: true}.WithTotal(c, ""), true
	}
	return provider.TokenUsage{}, false
}
