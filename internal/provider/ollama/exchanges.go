package ollama

import "github.com/traceforge/traceforge/internal/provider"

// exchangeRoutes are Ollama's routes around the LLM call, recorded as
// exchanges (DESIGN §13.4): the model list and details clients ask before
// a call (GET /api/tags, POST /api/show, GET /api/ps) and the server
// version.
var exchangeRoutes = []provider.ExchangeRoute{
	{Methods: []string{"GET"}, Path: "/api/tags"},
	{Methods: []string{"POST"}, Path: "/api/show"},
	{Methods: []string{"GET"}, Path: "/api/ps"},
	{Methods: []string{"GET"}, Path: "/api/version"},
}

func init() { Descriptor.ExchangeRoutes = exchangeRoutes }
