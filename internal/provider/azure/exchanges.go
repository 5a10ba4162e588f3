package azure

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// exchangeRoutes are Azure OpenAI's routes around the LLM call, recorded as
// exchanges (DESIGN §13.4): OpenAI's (files, uploads, vector stores,
// batches, background responses and their polling, conversations, count
// tokens, models) under the v1 API's /openai/v1 and under the dated API's
// /openai (with ?api-version=…, which the key keeps).
var exchangeRoutes = func() []provider.ExchangeRoute {
	var out []provider.ExchangeRoute
	for _, prefix := range []string{"/openai", "/openai/v1"} {
		for _, r := range provider.OpenAIExchangeRoutes {
			r.Path = prefix + strings.TrimPrefix(r.Path, "/v1")
			out = append(out, r)
		}
	}
	return out
}()

func init() { Descriptor.ExchangeRoutes = exchangeRoutes }

// IsExchange reports whether method and path are one of Azure OpenAI's
// exchange routes, so that a call no format routes (GET /openai/files?…)
// goes to Azure's upstream (registry.UpstreamOf).
func IsExchange(method, path string) bool {
	_, ok := provider.MatchExchange(exchangeRoutes, method, path)
	return ok
}
