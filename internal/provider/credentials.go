package provider

import (
	"net/http"
	"net/url"
	"strings"
)

// Family is whose account a credential belongs to. Two providers of one
// family (the Gemini API and Vertex AI are both Google's) may receive each
// other's credentials; a credential is never sent to another family's
// upstream (SECURITY.md, "Credentials stay with their provider").
type Family string

// The credential families traceforge tells apart. OpenAI, Anthropic and
// Ollama credentials are plain bearer keys that OpenAI-compatible servers
// share, so only the cloud credentials below are recognised by their shape.
const (
	FamilyOpenAI    Family = "openai"
	FamilyAnthropic Family = "anthropic"
	FamilyGoogle    Family = "google"
	FamilyAWS       Family = "aws"
	FamilyAzure     Family = "azure"
	FamilyOllama    Family = "ollama"
)

// Credential is a credential a request carries, named by its kind — never
// by its value.
type Credential struct {
	Kind   string // "an AWS SigV4 signature (Authorization: AWS4-HMAC-SHA256)"
	Family Family
}

// FamilyOfHost is the family whose API a host name belongs to, for an
// upstream the user pointed elsewhere than the provider's own (an Azure
// resource as --openai-upstream, Bedrock's OpenAI-compatible endpoint); ok
// is false for any other host.
func FamilyOfHost(host string) (Family, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.Contains(h, "]") {
		host = h
	}
	suffix := func(s string) bool { return host == s || strings.HasSuffix(host, "."+s) }
	switch {
	case suffix("amazonaws.com"), suffix("amazonaws.com.cn"):
		return FamilyAWS, true
	case suffix("googleapis.com"):
		return FamilyGoogle, true
	case suffix("openai.azure.com"), suffix("cognitiveservices.azure.com"), suffix("services.ai.azure.com"):
		return FamilyAzure, true
	case suffix("api.openai.com"):
		return FamilyOpenAI, true
	case suffix("api.anthropic.com"):
		return FamilyAnthropic, true
	}
	return "", false
}

// Credentials lists the cloud credentials a request carries in its headers
// and query: AWS (a SigV4 Authorization, X-Amz-Security-Token, a presigned
// query, a Bedrock API key), Google (an OAuth access token, x-goog-api-key,
// key=) and Azure (api-key). Each kind is listed once.
func Credentials(h http.Header, q url.Values) []Credential {
	var out []Credential
	add := func(kind string, f Family) {
		for _, c := range out {
			if c.Kind == kind {
				return
			}
		}
		out = append(out, Credential{Kind: kind, Family: f})
	}
	for _, v := range h.Values("Authorization") {
		scheme, token, _ := strings.Cut(strings.TrimSpace(v), " ")
		token = strings.TrimSpace(token)
		switch {
		case strings.EqualFold(scheme, "AWS4-HMAC-SHA256"):
			add("an AWS SigV4 signature (Authorization: AWS4-HMAC-SHA256)", FamilyAWS)
		case !strings.EqualFold(scheme, "Bearer"):
		case strings.HasPrefix(token, "ya29."):
			add("a Google OAuth access token (Authorization: Bearer ya29.…)", FamilyGoogle)
		case strings.HasPrefix(token, "ABSK"):
			add("an Amazon Bedrock API key (Authorization: Bearer ABSK…)", FamilyAWS)
		}
	}
	if len(h.Values("X-Amz-Security-Token")) > 0 {
		add("an AWS session token (X-Amz-Security-Token)", FamilyAWS)
	}
	if q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential") || q.Has("X-Amz-Security-Token") {
		add("an AWS presigned signature (X-Amz-* query parameters)", FamilyAWS)
	}
	if len(h.Values("X-Goog-Api-Key")) > 0 {
		add("a Google API key (x-goog-api-key)", FamilyGoogle)
	}
	if q.Has("key") {
		add("a Google API key (key= query parameter)", FamilyGoogle)
	}
	if len(h.Values("Api-Key")) > 0 {
		add("an Azure OpenAI key (api-key)", FamilyAzure)
	}
	return out
}

// ForeignCredential returns the first credential in h and q that belongs to
// another family than to, the family of the upstream the request would be
// sent to; ok is false when every recognised credential is to's own.
func ForeignCredential(h http.Header, q url.Values, to Family) (Credential, bool) {
	for _, c := range Credentials(h, q) {
		if c.Family != to {
			return c, true
		}
	}
	return Credential{}, false
}
