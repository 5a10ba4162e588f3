package provider

import (
	"bytes"
	"encoding/json"
)

// OpenAIExchangeRoutes are OpenAI's routes around the LLM call, recorded as
// exchanges (DESIGN §13.4), from the API reference: count tokens, the
// creation of a background response and its polling (retrieve; also
// delete, cancel, input items),
// compaction, conversations and their items, files, uploads, vector
// stores and their files and batches, batches, models. Azure OpenAI serves
// the same routes under /openai/v1 and /openai (azure.Descriptor).
var OpenAIExchangeRoutes = []ExchangeRoute{
	// A background response is created "queued", without output or usage:
	// its answer is what the polls of GET /v1/responses/{id} find.
	{Methods: []string{"POST"}, Path: "/v1/responses", Body: background},
	{Methods: []string{"POST"}, Path: "/v1/responses/input_tokens"},
	{Methods: []string{"POST"}, Path: "/v1/responses/compact"},
	{Methods: []string{"GET", "DELETE"}, Path: "/v1/responses/{id}"},
	{Methods: []string{"POST"}, Path: "/v1/responses/{id}/cancel"},
	{Methods: []string{"GET"}, Path: "/v1/responses/{id}/input_items"},
	{Methods: []string{"POST"}, Path: "/v1/conversations"},
	{Methods: []string{"GET", "POST", "DELETE"}, Path: "/v1/conversations/{id}"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/conversations/{id}/items"},
	{Methods: []string{"GET", "DELETE"}, Path: "/v1/conversations/{id}/items/{item}"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/files"},
	{Methods: []string{"GET", "DELETE"}, Path: "/v1/files/{id}"},
	{Methods: []string{"GET"}, Path: "/v1/files/{id}/content"},
	{Methods: []string{"POST"}, Path: "/v1/uploads"},
	{Methods: []string{"POST"}, Path: "/v1/uploads/{id}/parts"},
	{Methods: []string{"POST"}, Path: "/v1/uploads/{id}/complete"},
	{Methods: []string{"POST"}, Path: "/v1/uploads/{id}/cancel"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/vector_stores"},
	{Methods: []string{"GET", "POST", "DELETE"}, Path: "/v1/vector_stores/{id}"},
	{Methods: []string{"POST"}, Path: "/v1/vector_stores/{id}/search"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/vector_stores/{id}/files"},
	{Methods: []string{"GET", "POST", "DELETE"}, Path: "/v1/vector_stores/{id}/files/{file}"},
	{Methods: []string{"GET"}, Path: "/v1/vector_stores/{id}/files/{file}/content"},
	{Methods: []string{"POST"}, Path: "/v1/vector_stores/{id}/file_batches"},
	{Methods: []string{"GET"}, Path: "/v1/vector_stores/{id}/file_batches/{batch}"},
	{Methods: []string{"POST"}, Path: "/v1/vector_stores/{id}/file_batches/{batch}/cancel"},
	{Methods: []string{"GET"}, Path: "/v1/vector_stores/{id}/file_batches/{batch}/files"},
	{Methods: []string{"GET", "POST"}, Path: "/v1/batches"},
	{Methods: []string{"GET"}, Path: "/v1/batches/{id}"},
	{Methods: []string{"POST"}, Path: "/v1/batches/{id}/cancel"},
	{Methods: []string{"GET"}, Path: "/v1/models"},
	{Methods: []string{"GET"}, Path: "/v1/models/{model}"},
}

// background reports whether a Responses request body asks for a
// background response that is not streamed ("background": true; a
// streamed one is an LLM call like any other stream).
func background(body []byte) bool {
	if !bytes.Contains(body, []byte(`"background"`)) {
		return false
	}
	var b struct {
		Background bool `json:"background"`
		Stream     bool `json:"stream"`
	}
	return json.Unmarshal(body, &b) == nil && b.Background && !b.Stream
}
