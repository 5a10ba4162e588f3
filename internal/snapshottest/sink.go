package snapshottest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
)

// Sink is a loopback HTTP server that records every connection made to it
// and every request it reads, for tests proving that something was never
// sent upstream: Conns counts TCP connections accepted, whether or not a
// request followed. It answers every request 200 with an empty OpenAI
// list.
type Sink struct {
	URL   string
	srv   *httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []*http.Request
}

// StartSink starts a Sink on 127.0.0.1; Close stops it.
func StartSink() *Sink {
	s := &Sink{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[]}` + "\n"))
	}))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// Conns is the number of connections accepted so far.
func (s *Sink) Conns() int { return int(s.conns.Load()) }

// Requests returns the requests read so far (headers and URL; bodies are
// not kept).
func (s *Sink) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// Close stops the sink.
func (s *Sink) Close() { s.srv.Close() }
