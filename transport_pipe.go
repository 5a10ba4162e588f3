package traceforge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// maxBuffered is how far a handler may run ahead of the application reading
// the response before its writes wait.
const maxBuffered = 4 << 20

// errBodyClosed is returned by a read after the application closed the body.
var errBodyClosed = errors.New("http: read on closed response body")

// serveInProcess runs h for in on its own goroutine and returns the response
// as soon as h writes its header. The body is a pipe: each write of h (each
// stream event) is readable at once. done is called when h has returned.
func serveInProcess(h http.Handler, in, orig *http.Request, done func()) (*http.Response, error) {
	w := newPipeResponse()
	go func() {
		defer done()
		var err error
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("traceforge: the in-process handler failed: %v", p)
				if p == http.ErrAbortHandler {
					err = errors.New("traceforge: the answer was aborted mid-way")
				}
			}
			w.finish(err)
		}()
		h.ServeHTTP(w, in)
	}()
	select {
	case <-w.ready:
	case <-orig.Context().Done():
		// The handler sees the same context and ends; what it still
		// writes is discarded.
		_ = (&pipeBody{w}).Close()
		return nil, orig.Context().Err()
	}
	if w.status == 0 {
		return nil, w.err
	}
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &pipeBody{w},
		ContentLength: -1,
		Request:       orig,
	}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		resp.ContentLength = n
	}
	if orig.Method == http.MethodHead {
		resp.Body = http.NoBody
	}
	return resp, nil
}

// pipeResponse is the http.ResponseWriter the handler writes to; the
// application reads what it wrote through pipeBody. Writes go to a buffer
// (up to maxBuffered ahead of the reader), like a socket: a handler is not
// held up by a reader that stops early. Once the application has closed the
// body, writes are discarded, so the call still completes (and is
// snapshotted) as it would behind a real connection whose client read the
// whole answer.
type pipeResponse struct {
	header http.Header
	sent   http.Header // the header as of WriteHeader
	status int         // 0 until WriteHeader; stays 0 when the handler failed first
	ready  chan struct{}

	mu           sync.Mutex
	cond         *sync.Cond
	buf          bytes.Buffer
	done         bool  // the handler returned
	err          error // why the handler failed (nil = clean end)
	readerClosed bool
}

func newPipeResponse() *pipeResponse {
	w := &pipeResponse{header: http.Header{}, ready: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return // informational answers are not passed on
	}
	w.status = code
	w.sent = w.header.Clone()
	close(w.ready)
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.buf.Len() >= maxBuffered && !w.readerClosed {
		w.cond.Wait()
	}
	if w.readerClosed {
		return len(p), nil
	}
	w.buf.Write(p)
	w.cond.Broadcast()
	return len(p), nil
}

// Flush implements http.Flusher: written bytes are readable at once.
func (w *pipeResponse) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
}

// finish marks the end of the handler; err is why it failed (nil = clean).
func (w *pipeResponse) finish(err error) {
	w.mu.Lock()
	w.done, w.err = true, err
	w.cond.Broadcast()
	w.mu.Unlock()
	if w.status == 0 {
		if err == nil {
			w.WriteHeader(http.StatusOK)
		} else {
			close(w.ready) // RoundTrip returns err
		}
	}
}

// pipeBody is the response body the application reads.
type pipeBody struct{ w *pipeResponse }

func (b *pipeBody) Read(p []byte) (int, error) {
	w := b.w
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.buf.Len() == 0 && !w.done && !w.readerClosed {
		w.cond.Wait()
	}
	switch {
	case w.readerClosed:
		return 0, errBodyClosed
	case w.buf.Len() > 0:
		n, _ := w.buf.Read(p)
		w.cond.Broadcast()
		return n, nil
	case w.err != nil:
		return 0, w.err
	}
	return 0, io.EOF
}

func (b *pipeBody) Close() error {
	w := b.w
	w.mu.Lock()
	w.readerClosed = true
	w.buf = bytes.Buffer{}
	w.cond.Broadcast()
	w.mu.Unlock()
	return nil
}
