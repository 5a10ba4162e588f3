package anthropic

import "github.com/traceforge/traceforge/internal/provider"

// exchangeRoutes are Anthropic's routes around the LLM call, recorded as
// exchanges (DESIGN §13.4), from the API reference: token counting,
// message batches (create, list, retrieve, cancel, delete, results: the
// polling of a batch), files and models.
var exchangeRoutes = []provider.ExchangeRoute{
	{Methods: []string{"POST"}, Path: "/v1/messages/count_tokens"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/messages/batches"},
	{Methods: []string{"GET", "DELETE"}, Path: "/v1/messages/batches/{id}"},
	{Methods: []string{"POST"}, Path: "/v1/messages/batches/{id}/cancel"},
	{Methods: []string{"GET"}, Path: "/v1/messages/batches/{id}/results"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/files"},
	{Methods: []string{"GET", "DELETE"}, Path: "/v1/files/{id}"},
	{Methods: []string{"GET"}, Path: "/v1/files/{id}/content"},
	{Methods: []string{"GET"}, Path: "/v1/models"},
	{Methods: []string{"GET"}, Path: "/v1/models/{model}"},
}

func init() { Descriptor.ExchangeRoutes = exchangeRoutes }
