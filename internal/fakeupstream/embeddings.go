package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI embeddings: POST …/embeddings. input is a string, an array of
// strings, an array of token ids or an array of token-id arrays; each input
// gets a deterministic unit vector (derived from the model and its text, see
// call.embedding) of the model's size (text-embedding-3-large 3072, others
// 1536) or dimensions (not on text-embedding-ada-002). encoding_format
// "float" (default) sends numbers, "base64" little-endian float32 bytes in
// standard base64. usage: prompt_tokens = total_tokens = words of the
// strings (token arrays: their length).

type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat *string         `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

func openAIEmbeddingSize(model string) int {
	if strings.Contains(model, "3-large") {
		return 3072
	}
	return 1536
}

// embeddingInputs returns the texts to embed and their token count.
func embeddingInputs(raw json.RawMessage) (texts []string, tokens int, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, words(s), s != ""
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		for _, t := range list {
			if t == "" {
				return nil, 0, false
			}
			tokens += words(t)
		}
		return list, tokens, true
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return []string{fmt.Sprint(ids)}, len(ids), true
	}
	var idLists [][]int
	if json.Unmarshal(raw, &idLists) == nil && len(idLists) > 0 {
		for _, l := range idLists {
			if len(l) == 0 {
				return nil, 0, false
			}
			texts = append(texts, fmt.Sprint(l))
			tokens += len(l)
		}
		return texts, tokens, true
	}
	return nil, 0, false
}

func (c *call) serveEmbeddings(body []byte) {
	var req embeddingsRequest
	if !c.decodeOpenAI(body, &req, &req.Model) {
		return
	}
	texts, tokens, ok := embeddingInputs(req.Input)
	if !ok {
		c.fail(http.StatusBadRequest, "",
			"'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "input")
		return
	}
	format := "float"
	if req.EncodingFormat != nil {
		format = *req.EncodingFormat
	}
	if format != "float" && format != "base64" {
		c.fail(http.StatusBadRequest, "invalid_value",
			fmt.Sprintf("Invalid value: '%s'. Supported values are: 'float' and 'base64'.", format), "encoding_format")
		return
	}
	dims := openAIEmbeddingSize(req.Model)
	if req.Dimensions != nil {
		switch {
		case strings.Contains(req.Model, "ada-002"):
			c.fail(http.StatusBadRequest, "", "This model does not support specifying dimensions.", "dimensions")
			return
		case *req.Dimensions < 1 || *req.Dimensions > dims:
			c.fail(http.StatusBadRequest, "",
				fmt.Sprintf("Invalid 'dimensions': %d is not between 1 and %d.", *req.Dimensions, dims), "dimensions")
			return
		}
		dims = *req.Dimensions
	}
	data := make([]any, len(texts))
	for i, t := range texts {
		v := c.embedding(req.Model, t, dims)
		var emb any = v
		if format == "base64" {
			emb = float32Base64(v)
		}
		data[i] = fields("object", "embedding", "index", i, "embedding", emb)
	}
	c.ok(fields("object", "list", "data", data, "model", c.model(req.Model),
		"usage", fields("prompt_tokens", tokens, "total_tokens", tokens)), "  ")
}
