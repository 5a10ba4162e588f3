package provider

import (
	"net/http"
	"slices"
	"strings"
)

// Descriptor is everything traceforge knows about one provider outside its
// wire formats (DESIGN §13.1): its snapshot folder, the formats it serves,
// its upstream and how an application's SDK is pointed at traceforge, its
// credentials, how --live authenticates and how stats read its usage. The
// CLI's flags, the environment given to COMMAND, upstream resolution, live
// auth, the secret rules and stats are generated from the list of
// descriptors (provider/registry.Providers); adding a provider is one
// descriptor in its own package and one line in that list
// (docs/architecture.md, "Adding a provider").
type Descriptor struct {
	Name  Name   // snapshot folder and key provider: "openai"
	Title string // for people: "OpenAI"
	// Family is whose credentials the provider's upstream takes
	// (credentials.go).
	Family Family
	// Since is the format version whose sets first held the provider's
	// folder ("1.0.0", "1.1.0"): migrations from older versions know only
	// the providers of their target.
	Since string
	// KeyHeaders are request headers the provider's SDKs always send that
	// join the request key (a record stores them in request_headers).
	KeyHeaders []string
	// Formats are the provider's wire formats in lookup order; the first is
	// the provider's default (its error shape for calls that do not parse,
	// its format for a 1.0.0 record that no other format owns).
	Formats []Format
	// RoutesFirst: the provider's formats are asked before every other
	// provider's when a call is routed, because its paths also end like
	// another's that routes any prefix (Azure OpenAI's
	// /openai/deployments/{d}/chat/completions ends like OpenAI's).
	RoutesFirst bool

	// ExchangeRoutes are the provider's routes around the LLM call
	// (count-tokens, files, vector stores, conversations, response
	// polling, batches, models) that record keeps as exchange records and
	// replay answers in recorded order (DESIGN §13.4, exchange.go). A call
	// that no format routes goes to the provider UpstreamOf names and is an
	// exchange when one of that provider's ExchangeRoutes matches it.
	ExchangeRoutes []ExchangeRoute

	// UpstreamHelp describes --<name>-upstream: "OpenAI or
	// OpenAI-compatible base URL, with its /v1".
	UpstreamHelp string
	// DefaultUpstream is the upstream base URL when none is configured.
	DefaultUpstream string
	// VersionPrefix is the API version the base URLs carry ("/v1" for
	// OpenAI: the application's base URL on traceforge ends in it, and so
	// does the upstream's), trimmed from a called path before it is joined
	// to the upstream base URL. "" = the base URLs carry no version.
	VersionPrefix string
	// BaseURLEnv is the variable the provider's SDKs read their base URL
	// from: COMMAND gets it pointing at traceforge (with VersionPrefix), and
	// when it is already set it names the upstream to record against.
	BaseURLEnv string
	// ParseBaseURL turns a BaseURLEnv value into a base URL (OLLAMA_HOST is
	// host:port); nil = the value is a URL.
	ParseBaseURL func(string) string
	// MoreBaseURLEnv are further variables the provider's SDKs read their
	// base URL from, each with the path those SDKs expect after
	// traceforge's root instead of VersionPrefix (Vertex AI: google-genai
	// reads GOOGLE_VERTEX_BASE_URL, BaseURLEnv, while Anthropic's Vertex
	// clients read ANTHROPIC_VERTEX_BASE_URL, which ends in /v1). COMMAND
	// gets each; one already set in traceforge's environment, its Path
	// trimmed, names the upstream when BaseURLEnv is not set.
	MoreBaseURLEnv []BaseURLVar

	// KeyEnv are the variables --live reads the provider's key from, first
	// set wins (the Gemini SDKs read GOOGLE_API_KEY, then GEMINI_API_KEY).
	KeyEnv []string
	// KeyOptional: --live runs without a key (a local server needs none).
	KeyOptional bool
	// ReplayKeyEnv is set to a placeholder for COMMAND in replay when none
	// of KeyEnv is set, so the SDK starts without a real key ("" = none).
	ReplayKeyEnv string
	// LiveAuth puts key on a --live request (key may be "" when
	// KeyOptional).
	LiveAuth func(h http.Header, key string)
	// ReplayEnv are further variables, "NAME=value", that COMMAND gets in
	// replay when none of KeyEnv is set, each only when it is not set
	// already: Bedrock's dummy AWS credentials and region, so the AWS SDKs
	// sign their requests without looking for credentials elsewhere (the
	// instance metadata endpoint).
	ReplayEnv []string
	// PrepareUpstream, when set, rewrites a request of this provider's
	// routes just before it is sent upstream: out carries the upstream
	// URL and the application's headers, body is exactly what is sent.
	// Bedrock strips the SigV4 signature the client made for traceforge's
	// host and signs out anew for the upstream (and fills the region into
	// its default host). An error fails the call (502) before anything is
	// sent. It is called by record for every call forwarded to the
	// provider's upstream (a route nobody serves that UpstreamOf gives to
	// the provider included: Vertex AI's location still has to be filled
	// in) and by verify --live for every call it re-sends.
	PrepareUpstream func(out *http.Request, body []byte) error
	// ClientCredential, when set, reports whether a call carries a
	// credential of the provider's own (Bedrock: a SigV4 signature, a
	// presigned query, a bearer API key). A provider whose PrepareUpstream
	// signs with traceforge's credentials sets it: record refuses a call
	// carrying none, so that a local process holding no credential never
	// borrows traceforge's (SECURITY.md).
	ClientCredential func(r *http.Request) bool
	// CredentialHeaders carry the provider's credentials: forwarded,
	// never stored or printed (their values are scrubbed from upstream
	// text). Authorization, Proxy-Authorization and Cookie are everyone's.
	CredentialHeaders []string

	// SecretRules are the patterns of the provider's keys: a value that
	// matches one never reaches a snapshot, a report or a log.
	SecretRules []SecretRule
	// Clients are the provider's own client libraries, recognised by their
	// User-Agent in the hint for a call that arrived without a source;
	// checked before the generic ones (record/hints.go), in list order.
	Clients []Client
	// GoModules are the module paths of the provider's Go SDKs, whose
	// frames SourceTransport skips when it looks for the calling line.
	GoModules []string

	// Usage reads a call's token counters (the stored usage object's
	// integer members) for stats; ok is false when they are not this
	// provider's usage shape for endpoint.
	Usage func(endpoint string, c map[string]int64) (u TokenUsage, ok bool)
}

// BaseURLVar is a base-URL variable given to COMMAND: Name points at
// traceforge's root followed by Path.
type BaseURLVar struct{ Name, Path string }

// SecretRule is a key pattern (RE2 syntax) named as findings name it;
// every match contains Prefix.
type SecretRule struct{ Name, Prefix, Pattern string }

// Client is a client library as its User-Agent shows it.
type Client struct {
	Match []string // lowercase substrings of the User-Agent, any of them
	Name  string   // the library, as the hint names it
	Lang  Lang     // which attribution helper fits it
}

// Lang is the language of a client library, which picks the attribution
// helper a hint suggests.
type Lang string

// The languages traceforge has an attribution helper for.
const (
	LangNode   Lang = "node"
	LangPython Lang = "python"
	LangGo     Lang = "go"
)

// TokenUsage is one call's tokens by kind. Input excludes cache tokens
// (they are listed apart); Total is the provider's total. Split is false
// when the call has no usage breakdown.
type TokenUsage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Total      int64
	Split      bool
}

// Has reports whether c holds any of keys.
func Has(c map[string]int64, keys ...string) bool {
	for _, k := range keys {
		if _, ok := c[k]; ok {
			return true
		}
	}
	return false
}

// WithTotal sets u.Total from c[key] when present, else the sum of u's
// parts.
func (u TokenUsage) WithTotal(c map[string]int64, key string) TokenUsage {
	if t, ok := c[key]; ok && key != "" {
		u.Total = t
	} else {
		u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	return u
}

// UpstreamFlag is the name of the provider's upstream flag:
// "openai-upstream".
func (d *Descriptor) UpstreamFlag() string { return string(d.Name) + "-upstream" }

// UpstreamEnv is the variable that configures the upstream when the flag is
// not given: "TRACEFORGE_OPENAI_UPSTREAM".
func (d *Descriptor) UpstreamEnv() string {
	return "TRACEFORGE_" + strings.ToUpper(string(d.Name)) + "_UPSTREAM"
}

// BaseURLFor is the base URL the provider's SDKs use for a traceforge server
// whose root URL is root.
func (d *Descriptor) BaseURLFor(root string) string { return root + d.VersionPrefix }

// TrimVersion removes the base URL's version prefix from the start of a
// called path ("/v1/models" → "/models"), so that it can follow an
// upstream base URL that carries the version itself.
func (d *Descriptor) TrimVersion(p string) string {
	v := d.VersionPrefix
	switch {
	case v == "":
		return p
	case p == v:
		return ""
	case strings.HasPrefix(p, v+"/"):
		return p[len(v):]
	}
	return p
}

// LiveKey returns the provider's key for --live from getenv (the first of
// KeyEnv that is set).
func (d *Descriptor) LiveKey(getenv func(string) string) string {
	for _, k := range d.KeyEnv {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// KeyNames lists KeyEnv in alphabetical order, for messages: the first is
// the one a hint suggests exporting.
func (d *Descriptor) KeyNames() []string {
	names := slices.Clone(d.KeyEnv)
	slices.Sort(names)
	return names
}
