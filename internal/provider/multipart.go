package provider

import (
	"bytes"
	"encoding/base64"
	"maps"
)

// KeyBoundary is the boundary a multipart body is keyed with: the SDKs draw
// a random one for every upload, so the same file sent twice is keyed the
// same only once the boundary is written as this (DESIGN §13.4; the stored
// body keeps the bytes as sent).
const KeyBoundary = "traceforge-boundary"

// multipartBoundary is the boundary of a multipart body: the first line is
// "--" + boundary (1 to 200 characters, no CR or LF) and the body holds the
// close delimiter "\r\n--" + boundary + "--". ok is false for any other
// body.
func multipartBoundary(b []byte) (string, bool) {
	if !bytes.HasPrefix(b, []byte("--")) {
		return "", false
	}
	end := bytes.Index(b, []byte("\r\n"))
	if end < 3 || end > 202 {
		return "", false
	}
	boundary := b[2:end]
	if bytes.ContainsAny(boundary, "\r\n") || !bytes.Contains(b, append(append([]byte("\r\n--"), boundary...), "--"...)) {
		return "", false
	}
	return string(boundary), true
}

// keyMultipart returns the copy of a stored exchange request the key is
// computed over: a multipart body (body_text or body_b64) with its
// boundary written as KeyBoundary; request itself when its body is not
// multipart. request is never modified.
func keyMultipart(request map[string]any) map[string]any {
	var body []byte
	text, isText := request["body_text"].(string)
	b64, isB64 := request["body_b64"].(string)
	switch {
	case isText:
		body = []byte(text)
	case isB64:
		var err error
		if body, err = base64.StdEncoding.DecodeString(b64); err != nil {
			return request
		}
	default:
		return request
	}
	boundary, ok := multipartBoundary(body)
	if !ok {
		return request
	}
	body = bytes.ReplaceAll(body, []byte("--"+boundary), []byte("--"+KeyBoundary))
	out := maps.Clone(request)
	if isText {
		out["body_text"] = string(body)
	} else {
		out["body_b64"] = base64.StdEncoding.EncodeToString(body)
	}
	return out
}
