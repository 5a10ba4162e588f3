// Package wiretap keeps the raw bytes of every streamed answer a Go client
// reads, so that the suite can compare recorded and replayed streams event
// for event. When TF_E2E_WIRE names a file, each response whose Content-Type
// is text/event-stream, application/x-ndjson or
// application/vnd.amazon.eventstream appends one JSON line
//
//	{"content_type": "text/event-stream", "b64": "<the body bytes read>"}
//
// to it once its body reaches EOF or is closed, whichever comes first (the
// bytes the client had read by then). Unset, it changes nothing.
//
// Wrap the transport below traceforge.SourceTransport (its Base), or add
// Middleware after sdkmw.Attribute: either way it runs after the caller's
// line is taken, so attribution never sees its frames.
package wiretap

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"sync"
)

// Env is the variable naming the file the taps append to.
const Env = "TF_E2E_WIRE"

// streamTypes are the media types whose bodies are tapped.
var streamTypes = []string{"text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream"}

// Transport returns base (nil: http.DefaultTransport) with every streamed
// body tapped, or base itself when TF_E2E_WIRE is unset.
func Transport(base http.RoundTripper) http.RoundTripper {
	file := os.Getenv(Env)
	if file == "" {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base: base, file: file}
}

// Middleware is the same tap as an openai-go middleware (option.Middleware:
// both parameter types are aliases of these).
func Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return Transport(roundTripper(next)).RoundTrip(req)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type transport struct {
	base http.RoundTripper
	file string
}

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if slices.Contains(streamTypes, ct) {
		resp.Body = &body{rc: resp.Body, file: t.file, contentType: ct}
	}
	return resp, nil
}

// body tees what the client reads into buf and writes the line once.
type body struct {
	rc          io.ReadCloser
	file        string
	contentType string

	mu      sync.Mutex
	buf     bytes.Buffer
	written bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.buf.Write(p[:n])
	b.mu.Unlock()
	if err == io.EOF {
		b.flush()
	}
	return n, err
}

func (b *body) Close() error {
	b.flush()
	return b.rc.Close()
}

// appendMu orders the lines of concurrent streams within the process.
var appendMu sync.Mutex

// flush appends the line the first time it is called. A failure is said on
// stderr: the suite then finds the response missing.
func (b *body) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written {
		return
	}
	b.written = true
	line, _ := json.Marshal(map[string]string{"content_type": b.contentType, "b64": base64.StdEncoding.EncodeToString(b.buf.Bytes())})
	appendMu.Lock()
	defer appendMu.Unlock()
	f, err := os.OpenFile(b.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "wiretap: %v\n", err)
	}
}
