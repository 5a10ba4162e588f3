package fakeupstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// OpenAI's Files API, as its API reference answers it (traceforge records
// these calls as exchanges, DESIGN §13.4):
//
//   - POST …/v1/files, multipart/form-data with "purpose" and "file": the
//     file object {object, id, purpose, filename, bytes, created_at,
//     expires_at, status, status_details}; the id is derived from the
//     purpose, name and bytes (the same upload gets the same id)
//   - GET …/v1/files/{id}: the file object; an id never uploaded to this
//     fake is a 404 "No such File object"
//   - DELETE …/v1/files/{id}: {id, object: "file", deleted: true}

// fileCreated is the created_at of every uploaded file.
const fileCreated = 1767225600

// serveFiles answers a Files API call; false for any other route.
func (c *call) serveFiles() bool {
	p := c.r.URL.Path
	i := strings.LastIndex(p, "/v1/files")
	if i < 0 {
		return false
	}
	rest := p[i+len("/v1/files"):]
	id, isItem := strings.CutPrefix(rest, "/")
	if (rest != "" && !isItem) || strings.Contains(id, "/") || (isItem && id == "") {
		return false
	}
	c.ep = epResponses // OpenAI's error shape
	if !authorized(c.r) {
		c.fail(http.StatusUnauthorized, "", "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "")
		return true
	}
	switch {
	case !isItem && c.r.Method == http.MethodPost:
		c.uploadFile()
	case isItem && (c.r.Method == http.MethodGet || c.r.Method == http.MethodDelete):
		c.h.filesMu.Lock()
		f, ok := c.h.files[id]
		if ok && c.r.Method == http.MethodDelete {
			delete(c.h.files, id)
		}
		c.h.filesMu.Unlock()
		switch {
		case !ok:
			c.fail(http.StatusNotFound, "", "No such File object: "+id, "id")
		case c.r.Method == http.MethodDelete:
			c.setCommonHeaders()
			c.writeJSON(http.StatusOK, fields("id", id, "object", "file", "deleted", true), "  ")
		default:
			c.setCommonHeaders()
			c.writeJSON(http.StatusOK, f, "  ")
		}
	default:
		c.fail(http.StatusMethodNotAllowed, "", "Method "+c.r.Method+" not allowed for "+p, "")
	}
	return true
}

// uploadFile reads the multipart upload and answers its file object.
func (c *call) uploadFile() {
	mt, params, err := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		c.fail(http.StatusBadRequest, "", "Invalid Content-Type header (expected multipart/form-data with a boundary)", "")
		return
	}
	var purpose, name string
	var content []byte
	var haveFile bool
	mr := multipart.NewReader(bytes.NewReader(c.body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			c.fail(http.StatusBadRequest, "", "The multipart body could not be read: "+err.Error(), "")
			return
		}
		b, _ := io.ReadAll(part)
		switch part.FormName() {
		case "purpose":
			purpose = string(b)
		case "file":
			name, content, haveFile = part.FileName(), b, true
		}
	}
	switch {
	case !haveFile:
		c.fail(http.StatusBadRequest, "", "'file' is a required property", "file")
		return
	case purpose == "":
		c.fail(http.StatusBadRequest, "", "'purpose' is a required property", "purpose")
		return
	}
	sum := sha256.Sum256([]byte(purpose + "\x00" + name + "\x00" + string(content)))
	id := "file-" + hex.EncodeToString(sum[:])[:24]
	f := fields("object", "file", "id", id, "purpose", purpose, "filename", name, "bytes", len(content),
		"created_at", fileCreated, "expires_at", nil, "status", "processed", "status_details", nil)
	c.h.filesMu.Lock()
	if c.h.files == nil {
		c.h.files = map[string]object{}
	}
	c.h.files[id] = f
	c.h.filesMu.Unlock()
	c.setCommonHeaders()
	c.writeJSON(http.StatusOK, f, "  ")
}
