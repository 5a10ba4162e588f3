// Package bedrock is Amazon Bedrock's runtime API (DESIGN §13.5): the
// provider's descriptor (SigV4 re-signing, dummy credentials in replay) and
// its wire formats. Converse serves POST /model/{modelId}/converse and
// /converse-stream (JSON; the stream is application/vnd.amazon.eventstream
// frames, decoded and encoded with aws-sdk-go-v2's eventstream package).
//
// The model is part of the path: the stored request is the body plus
// "model", the model id from the path, percent-decoded
// (anthropic.claude-3-haiku-20240307-v1:0, or an inference profile's ARN),
// and the key endpoint is /model/{model id, decoded}/converse for both the
// plain and the streamed route.
package bedrock

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Name is Bedrock's snapshot folder.
const Name provider.Name = "bedrock"

// The operations of a /model/{modelId}/{operation} path.
const (
	OpConverse       = "converse"
	OpConverseStream = "converse-stream"
	modelSegment     = "/model/"
)

// Path is a parsed Bedrock runtime path.
type Path struct {
	Model string // the model id, percent-decoded
	Op    string // converse, converse-stream, …
}

// ParsePath splits …/model/{modelId}/{operation} (any prefix before
// /model/; no query). path is decoded (net/http's URL.Path), so a model id
// may hold "/" (an inference profile's ARN) and ":": the model id is
// everything between the first /model/ and the last "/". ok is false for
// any other path.
func ParsePath(path string) (Path, bool) {
	i := strings.Index(path, modelSegment)
	if i < 0 {
		return Path{}, false
	}
	rest := path[i+len(modelSegment):]
	j := strings.LastIndexByte(rest, '/')
	if j <= 0 || j == len(rest)-1 {
		return Path{}, false
	}
	p := Path{Model: rest[:j], Op: rest[j+1:]}
	if strings.ContainsAny(p.Model, " \t\r\n") {
		return Path{}, false
	}
	return p, true
}

// route claims POST Bedrock paths whose operation is one of ops, keyed as
// /model/{model}/{key}.
func route(method, path, key string, ops ...string) (provider.Endpoint, bool) {
	if method != http.MethodPost {
		return "", false
	}
	p, ok := ParsePath(path)
	if !ok {
		return "", false
	}
	for _, op := range ops {
		if p.Op == op {
			return provider.Endpoint(modelSegment + p.Model + "/" + key), true
		}
	}
	return "", false
}

// wire is what Bedrock's formats share: provider, model binding, stored
// normalization, live body and the error shape.
type wire struct{}

// Provider is Bedrock.
func (wire) Provider() provider.Name { return Name }

// OwnsRecord is false: Bedrock did not exist in format 1.0.0.
func (wire) OwnsRecord(map[string]any) bool { return false }

// BindPath puts the path's model id into the stored request as "model"; a
// body "model" other than the path's is refused (provider.ErrContradictsPath).
func (wire) BindPath(path string, request map[string]any) error {
	p, ok := ParsePath(path)
	if !ok {
		return fmt.Errorf("%s is not a Bedrock /model/{modelId}/{operation} path", path)
	}
	m, present := request["model"]
	if !present || m == nil {
		request["model"] = p.Model
		return nil
	}
	if s, ok := m.(string); ok && s == p.Model {
		return nil
	}
	return fmt.Errorf("%w: the body's model differs from the model id in the path (%s); send the model id in the path only", provider.ErrContradictsPath, p.Model)
}

// NormalizeStored drops explicit top-level nulls.
func (wire) NormalizeStored(request map[string]any) { provider.DropTopLevelNulls(request) }

// LiveBody is the request without the "model" the path carries.
func (wire) LiveBody(request map[string]any) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		if k != "model" {
			r[k] = v
		}
	}
	return r
}

// The AWS error types traceforge answers with, by status.
var errorStatus = map[string]int{
	"ValidationException":         http.StatusBadRequest,
	"AccessDeniedException":       http.StatusForbidden,
	"ResourceNotFoundException":   http.StatusNotFound,
	"ThrottlingException":         http.StatusTooManyRequests,
	"InternalServerException":     http.StatusInternalServerError,
	"ServiceUnavailableException": http.StatusServiceUnavailable,
}

// ErrorBody is AWS's JSON error shape, {"__type": typ, "message": …}: the
// AWS SDKs read the error's type from __type when no x-amzn-ErrorType
// header names it. code is unused.
func (wire) ErrorBody(typ, _, message string) []byte {
	if _, ok := errorStatus[typ]; !ok {
		typ = "ValidationException"
	}
	return provider.MarshalOrdered("__type", typ, "message", message)
}

// ErrorType maps a status to Bedrock's error type.
func (wire) ErrorType(status int) string {
	switch status {
	case http.StatusForbidden:
		return "AccessDeniedException"
	case http.StatusNotFound:
		return "ResourceNotFoundException"
	case http.StatusTooManyRequests:
		return "ThrottlingException"
	case http.StatusInternalServerError:
		return "InternalServerException"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return "ServiceUnavailableException"
	}
	return "ValidationException"
}

// MissError is ResourceNotFoundException (404, which the AWS SDKs do not
// retry).
func (wire) MissError() (typ, code string) { return "ResourceNotFoundException", "" }
