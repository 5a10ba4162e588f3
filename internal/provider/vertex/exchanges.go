package vertex

import "github.com/traceforge/traceforge/internal/provider"

// exchangeRoutes are Vertex AI's routes around the LLM call, recorded as
// exchanges (DESIGN §13.4), under each API version: Claude's count_tokens
// (POST …/publishers/anthropic/models/count-tokens:rawPredict, which
// RawPredict does not route), explicit caches (cachedContents) and
// batch prediction jobs polled until done. Gemini's countTokens on Vertex
// is a format of its own (CountTokens).
var exchangeRoutes = func() []provider.ExchangeRoute {
	var out []provider.ExchangeRoute
	for _, v := range versions {
		loc := "/" + v + "/projects/{project}/locations/{location}"
		out = append(out,
			provider.ExchangeRoute{Methods: []string{"POST"}, Path: loc + "/publishers/anthropic/models/" + countTokensModel + ":" + MethodRawPredict},
			provider.ExchangeRoute{Methods: []string{"GET", "POST"}, Path: loc + "/cachedContents"},
			provider.ExchangeRoute{Methods: []string{"GET", "PATCH", "DELETE"}, Path: loc + "/cachedContents/{id}"},
			provider.ExchangeRoute{Methods: []string{"GET", "POST"}, Path: loc + "/batchPredictionJobs"},
			provider.ExchangeRoute{Methods: []string{"GET", "DELETE"}, Path: loc + "/batchPredictionJobs/{id}"},
			provider.ExchangeRoute{Methods: []string{"POST"}, Path: loc + "/batchPredictionJobs/{id}:cancel"},
		)
	}
	return out
}()

func init() { Descriptor.ExchangeRoutes = exchangeRoutes }
