// Package responses is the OpenAI Responses API wire format (POST
// …/v1/responses): the default of the Vercel AI SDK's openai(model) and of
// @openai/agents. Streams are typed SSE events (`event:` lines), stored as the
// response object of the final response.completed / response.incomplete /
// response.failed event. Other routes under /responses (retrieve, delete,
// cancel, input items) are not this format's: record forwards them without a
// snapshot and lists them.
package responses

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Endpoint is the Responses key endpoint.
const Endpoint provider.Endpoint = "/v1/responses"

// SnapshotPrefix starts the key's previous_response_id of a chained request:
// "snapshot:<parent snapshot id>" (DESIGN §12.2, §12.9 item 5).
const SnapshotPrefix = provider.ResponsesSnapshotPrefix

// Format is the Responses format: OpenAI's Responses wire
// (provider.ResponsesWire, which Azure OpenAI shares) on OpenAI's routes.
// The zero value is ready to use.
type Format struct {
	provider.ResponsesWire
}

var (
	_ provider.Format   = Format{}
	_ provider.Lineager = Format{}
)

// New returns the Responses format.
func New() Format { return Format{} }

// Provider is OpenAI.
func (Format) Provider() provider.Name { return provider.OpenAI }

// Endpoint is /v1/responses.
func (Format) Endpoint() provider.Endpoint { return Endpoint }

// Route owns POST paths ending in /responses (any prefix the base URL has);
// GET/DELETE …/responses/{id} and POST …/responses/{id}/cancel are not
// owned.
func (Format) Route(method, path string) (provider.Endpoint, bool) {
	if method != "POST" || !strings.HasSuffix(path, "/responses") {
		return "", false
	}
	return Endpoint, true
}

// OwnsRecord is false: format 1.0.0 had no Responses records.
func (Format) OwnsRecord(map[string]any) bool { return false }

// RecordSchema is the Responses record definition.
func (Format) RecordSchema() string { return "#/$defs/responsesRecord" }
