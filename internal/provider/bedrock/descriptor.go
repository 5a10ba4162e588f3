package bedrock

import (
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// ReplayCredential is the dummy AWS access key id and secret replay gives
// COMMAND: the AWS SDKs sign with it, and traceforge's replay checks no
// signature.
const ReplayCredential = "traceforge-replay"

// Descriptor describes Amazon Bedrock's runtime API (DESIGN §13.5). The
// AWS SDKs read AWS_ENDPOINT_URL_BEDROCK_RUNTIME (a URL without a path) and
// sign every request with SigV4 for the host they call — traceforge's — so
// record re-signs it for the upstream (PrepareUpstream) with traceforge's
// own credentials; a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK, sent as
// Authorization: Bearer ABSK…) is passed through. The default upstream's
// region is the one the client signed for.
var Descriptor = &provider.Descriptor{
	Name:            Name,
	Title:           "Amazon Bedrock",
	Family:          provider.FamilyAWS,
	Since:           "1.2.0",
	Formats:         []provider.Format{NewConverse(), NewInvokeAnthropic()},
	ExchangeRoutes:  exchangeRoutes,
	UpstreamHelp:    "Bedrock runtime endpoint URL ({region}: the region the client signed for, else AWS_REGION)",
	DefaultUpstream: "https://bedrock-runtime." + RegionPlaceholder + ".amazonaws.com",
	BaseURLEnv:      "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
	// --live authenticates with a Bedrock API key when one is set, else
	// signs with traceforge's AWS credentials (PrepareUpstream); replay
	// gives the SDKs dummy credentials and a region when no key is set, so
	// they sign without reaching the instance metadata endpoint.
	KeyEnv:      []string{"AWS_BEARER_TOKEN_BEDROCK"},
	KeyOptional: true,
	ReplayEnv: []string{
		"AWS_ACCESS_KEY_ID=" + ReplayCredential,
		"AWS_SECRET_ACCESS_KEY=" + ReplayCredential,
		"AWS_REGION=us-east-1",
		// botocore reads its region only from AWS_DEFAULT_REGION.
		"AWS_DEFAULT_REGION=us-east-1",
	},
	LiveAuth: func(h http.Header, key string) {
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
	},
	PrepareUpstream:   prepareUpstream,
	ClientCredential:  clientCredential,
	CredentialHeaders: []string{"X-Amz-Security-Token"},
	// gitleaks' aws-access-token (long-term and temporary key ids) and
	// Bedrock API keys.
	SecretRules: []provider.SecretRule{
		{Name: "aws-access-token", Prefix: "IA", Pattern: `\b(?:AKIA|ASIA)[A-Z2-7]{16}\b`},
		{Name: "aws-bedrock-api-key", Prefix: "ABSK", Pattern: `\bABSK[A-Za-z0-9+/]{109,269}={0,2}`},
	},
	Clients: []provider.Client{
		{Match: []string{"aws-sdk-js"}, Name: "@aws-sdk/client-bedrock-runtime", Lang: provider.LangNode},
		{Match: []string{"boto3", "botocore"}, Name: "boto3", Lang: provider.LangPython},
		{Match: []string{"aws-sdk-go-v2"}, Name: "aws-sdk-go-v2", Lang: provider.LangGo},
	},
	GoModules: []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go"},
	Usage:     usage,
}

// usage: inputTokens excludes the cache reads and writes, listed apart;
// totalTokens is all of them.
func usage(_ string, c map[string]int64) (provider.TokenUsage, bool) {
	if !provider.Has(c, "inputTokens", "outputTokens") {
		return provider.TokenUsage{}, false
	}
	return provider.TokenUsage{Input: c["inputTokens"], Output: c["outputTokens"],
		CacheRead: c["cacheReadInputTokens"], CacheWrite: c["cacheWriteInputTokens"], Split: true}.WithTotal(c, "totalTokens"), true
}

// IsEventStream reports whether a Content-Type is AWS's event stream.
func IsEventStream(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), EventStreamContentType)
}

// clientCredential reports whether a call carries an AWS credential of the
// application's own — a SigV4 signature (Authorization: AWS4-HMAC-SHA256
// with a credential scope), a presigned query (X-Amz-Signature) or a
// Bedrock API key (Authorization: Bearer …) — before record signs it with
// traceforge's (Descriptor.ClientCredential).
func clientCredential(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	if _, ok := ParseScope(auth); ok {
		return true
	}
	if scheme, token, ok := strings.Cut(strings.TrimSpace(auth), " "); ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != "" {
		return true
	}
	return r.URL.Query().Get("X-Amz-Signature") != ""
}
