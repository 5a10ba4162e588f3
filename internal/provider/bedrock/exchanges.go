package bedrock

import "github.com/traceforge/traceforge/internal/provider"

// exchangeRoutes are Bedrock's routes around the LLM call recorded as
// exchanges (DESIGN §13.4): CountTokens, POST /model/{modelId}/count-tokens
// (its body holds a Converse or an InvokeModel request; the answer is
// {"inputTokens": N}). Model ids hold ":", hence {model+}.
var exchangeRoutes = []provider.ExchangeRoute{
	{Methods: []string{"POST"}, Path: "/model/{model+}/count-tokens"},
}

// IsExchange reports whether method and path are one of Bedrock's exchange
// routes, so that a call no format routes goes to Bedrock's upstream
// (registry.UpstreamOf) and is recorded as an exchange.
func IsExchange(method, path string) bool {
	_, ok := provider.MatchExchange(exchangeRoutes, method, path)
	return ok
}
