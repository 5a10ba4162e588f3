package openai

import "github.com/traceforge/traceforge/internal/provider"

// OpenAI's exchange routes (DESIGN §13.4) are provider.OpenAIExchangeRoutes,
// which Azure OpenAI shares.
func init() { Descriptor.ExchangeRoutes = provider.OpenAIExchangeRoutes }
