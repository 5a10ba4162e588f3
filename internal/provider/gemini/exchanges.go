package gemini

import "github.com/traceforge/traceforge/internal/provider"

// exchangeRoutes are the Gemini API's routes around the LLM call, recorded
// as exchanges (DESIGN §13.4), from the API reference, under each version
// the SDKs use: countTokens, files (metadata, list, delete; the resumable
// upload protocol hands out upstream URLs and is not recorded), cached
// contents, batches (batchGenerateContent and the operations it returns,
// polled until done), models.
var exchangeRoutes = func() []provider.ExchangeRoute {
	var out []provider.ExchangeRoute
	for _, v := range []string{"/v1beta", "/v1", "/v1alpha"} {
		out = append(out,
			provider.ExchangeRoute{Methods: []string{"POST"}, Path: v + "/models/{model}:countTokens"},
			provider.ExchangeRoute{Methods: []string{"POST"}, Path: v + "/models/{model}:batchGenerateContent"},
			provider.ExchangeRoute{Methods: []string{"GET"}, Path: v + "/models"},
			provider.ExchangeRoute{Methods: []string{"GET"}, Path: v + "/models/{model}"},
			provider.ExchangeRoute{Methods: []string{"GET"}, Path: v + "/files"},
			provider.ExchangeRoute{Methods: []string{"GET", "DELETE"}, Path: v + "/files/{id}"},
			provider.ExchangeRoute{Methods: []string{"GET", "POST"}, Path: v + "/cachedContents"},
			provider.ExchangeRoute{Methods: []string{"GET", "PATCH", "DELETE"}, Path: v + "/cachedContents/{id}"},
			provider.ExchangeRoute{Methods: []string{"GET"}, Path: v + "/batches"},
			provider.ExchangeRoute{Methods: []string{"GET", "DELETE"}, Path: v + "/batches/{id}"},
			provider.ExchangeRoute{Methods: []string{"POST"}, Path: v + "/batches/{id}:cancel"},
			provider.ExchangeRoute{Methods: []string{"GET"}, Path: v + "/operations/{id}"},
		)
	}
	return out
}()

func init() { Descriptor.ExchangeRoutes = exchangeRoutes }
