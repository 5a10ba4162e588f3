package azure

import (
	"github.com/traceforge/traceforge/internal/provider"
)

// The patterns of the key endpoints (Format.Endpoint); the concrete ones
// come from Route.
const (
	chatPattern        = "/openai/deployments/{deployment}/chat/completions"
	completionsPattern = "/openai/deployments/{deployment}/completions"
	embeddingsPattern  = "/openai/deployments/{deployment}/embeddings"
	responsesPattern   = "/openai/v1/responses"
)

// Chat is chat completions: OpenAI's wire (provider.OpenAIWire) on
// …/openai/deployments/{d}/chat/completions and …/openai/v1/chat/completions.
type Chat struct {
	provider.OpenAIWire
	query
}

// Completions is the legacy completions on
// …/openai/deployments/{d}/completions.
type Completions struct {
	provider.OpenAIWire
	query
}

// Embeddings is embeddings on …/openai/deployments/{d}/embeddings and
// …/openai/v1/embeddings.
type Embeddings struct {
	provider.OpenAIEmbeddings
	query
}

// Responses is the Responses API on …/openai/v1/responses.
type Responses struct {
	provider.ResponsesWire
	query
}

var (
	_ provider.Format        = Chat{}
	_ provider.UsageInjector = Chat{}
	_ provider.PathBinder    = Chat{}
	_ provider.QueryKeyed    = Chat{}
	_ provider.Format        = Completions{}
	_ provider.UsageInjector = Completions{}
	_ provider.Format        = Embeddings{}
	_ provider.Format        = Responses{}
	_ provider.Lineager      = Responses{}
)

// NewChat returns the chat completions format.
func NewChat() Chat { return Chat{OpenAIWire: provider.NewOpenAIWire(provider.ChatCompletions)} }

// NewCompletions returns the legacy completions format.
func NewCompletions() Completions {
	return Completions{OpenAIWire: provider.NewOpenAIWire(provider.Completions)}
}

// Provider is Azure OpenAI.
func (Chat) Provider() provider.Name        { return Name }
func (Completions) Provider() provider.Name { return Name }
func (Embeddings) Provider() provider.Name  { return Name }
func (Responses) Provider() provider.Name   { return Name }

// Endpoint is the pattern of the format's key endpoints.
func (Chat) Endpoint() provider.Endpoint        { return chatPattern }
func (Completions) Endpoint() provider.Endpoint { return completionsPattern }
func (Embeddings) Endpoint() provider.Endpoint  { return embeddingsPattern }
func (Responses) Endpoint() provider.Endpoint   { return responsesPattern }

// Route owns POST …/openai/{deployments/{d},v1}/chat/completions.
func (Chat) Route(method, path string) (provider.Endpoint, bool) { return route(method, path, opChat) }

// Route owns POST …/openai/deployments/{d}/completions.
func (Completions) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, opCompletions)
}

// Route owns POST …/openai/{deployments/{d},v1}/embeddings.
func (Embeddings) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, opEmbeddings)
}

// Route owns POST …/openai/v1/responses.
func (Responses) Route(method, path string) (provider.Endpoint, bool) {
	return route(method, path, opResponses)
}

// BindPath adds the deployment as "model" when the body has none.
func (Chat) BindPath(path string, r map[string]any) error        { return bindDeployment(path, r) }
func (Completions) BindPath(path string, r map[string]any) error { return bindDeployment(path, r) }
func (Embeddings) BindPath(path string, r map[string]any) error  { return bindDeployment(path, r) }

// OwnsRecord is false: Azure OpenAI came with format 1.2.0, whose records
// name their endpoint.
func (Chat) OwnsRecord(map[string]any) bool        { return false }
func (Completions) OwnsRecord(map[string]any) bool { return false }
func (Embeddings) OwnsRecord(map[string]any) bool  { return false }
func (Responses) OwnsRecord(map[string]any) bool   { return false }

// KeyRequest drops stream and stream_options and renumbers tool-call ids,
// as OpenAI's chat format does.
func (Chat) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	r := provider.WithoutStream(request)
	provider.RenumberToolCallIDs(r)
	return r
}

// KeyRequest drops stream and stream_options.
func (Completions) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	return provider.WithoutStream(request)
}

// RecordSchema is the format's record definition.
func (Chat) RecordSchema() string        { return "#/$defs/azureChatRecord" }
func (Completions) RecordSchema() string { return "#/$defs/azureCompletionsRecord" }
func (Embeddings) RecordSchema() string  { return "#/$defs/azureEmbeddingsRecord" }
func (Responses) RecordSchema() string   { return "#/$defs/azureResponsesRecord" }
