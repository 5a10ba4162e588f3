// Package serve holds what every traceforge HTTP server shares: loopback
// listening, the Host check against DNS rebinding, body caps, refusal of
// proxy-style requests, timeouts, and the exports printed for applications.
package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// MaxRequestBody caps request bodies (413 beyond it).
const MaxRequestBody = 32 << 20

// DefaultListen is the foreground server address.
const DefaultListen = "127.0.0.1:8787"

// ErrBind wraps listen failures (a usage/configuration error).
var ErrBind = errors.New("cannot listen")

// Listen opens addr ("" = a free loopback port). warning is non-empty when
// addr names a non-loopback interface (":8787" counts as all interfaces).
func Listen(addr string) (ln net.Listener, warning string, err error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("%w on %q: %v", ErrBind, addr, err)
	}
	if !IsLoopbackHost(host) {
		warning = fmt.Sprintf("listening on %s: reachable from other machines; API keys pass through this server", addr)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("%w on %s: %v", ErrBind, addr, err)
	}
	return ln, warning, nil
}

// IsLoopbackHost reports whether host (no port) is localhost, 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard wraps h with the safety rules of every server: non-loopback Host →
// 403 (unless allowed), CONNECT → 405, absolute-form targets → 400, bodies
// over MaxRequestBody → 413. errBody formats an error body for a status.
// With DenyBypass, CONNECT and absolute-form requests get 403 and are
// counted instead.
func Guard(h http.Handler, allowHosts []string, errBody func(w http.ResponseWriter, r *http.Request, status int, msg string), opts ...GuardOption) http.Handler {
	var gc guardConfig
	for _, o := range opts {
		o(&gc)
	}
	allowed := map[string]bool{}
	for _, a := range allowHosts {
		allowed[strings.ToLower(a)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gc.bypasses != nil {
			if method, target, ok := bypassTarget(r); ok {
				gc.bypasses.add(method, target)
				errBody(w, r, http.StatusForbidden, fmt.Sprintf("%s %s refused (--deny-bypass): %s", method, target, BypassHint))
				return
			}
		}
		if r.Method == http.MethodConnect {
			errBody(w, r, http.StatusMethodNotAllowed, "CONNECT is not supported: traceforge is a base-URL proxy, not a forward proxy")
			return
		}
		if r.URL.IsAbs() || r.URL.Host != "" || !strings.HasPrefix(r.RequestURI, "/") {
			errBody(w, r, http.StatusBadRequest, "absolute-form request targets are refused: point the SDK's base URL at traceforge instead")
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !IsLoopbackHost(host) && !allowed[strings.ToLower(host)] && !allowed[strings.ToLower(r.Host)] {
			errBody(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name; add --allow-host %s if this is intended", r.Host, host))
			return
		}
		if r.ContentLength > MaxRequestBody {
			errBody(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", MaxRequestBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBody)
		h.ServeHTTP(w, r)
	})
}

// readHeaderTimeout is how long a client may take to send its request
// headers (DESIGN §10: 10 s); replaced in tests.
var readHeaderTimeout = 10 * time.Second

// NewServer returns an http.Server with traceforge's timeouts: a 10 s
// ReadHeaderTimeout, no blanket write timeout (long streams are normal).
// It speaks HTTP/1.1 and HTTP/2 with prior knowledge over plain TCP (h2c:
// the AWS JavaScript SDK uses it by default, also for http:// endpoints),
// never an Upgrade to h2c (DESIGN §12.10, §13.5): an HTTP/1.1 request
// asking for one is answered as HTTP/1.1.
func NewServer(h http.Handler) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: 120 * time.Second, Protocols: &p}
}

// IsMaxBytes reports whether err came from the body cap.
func IsMaxBytes(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// AllowList returns the Host names a server accepts besides loopback ones
// (DESIGN §11): each --allow-host name, plus the host of each address in
// addrs that is neither empty nor loopback (the address the server was
// asked to listen on). Record and verify both build their list here.
func AllowList(allowHosts []string, addrs ...string) []string {
	out := append([]string(nil), allowHosts...)
	for _, a := range addrs {
		if h, _, err := net.SplitHostPort(a); err == nil && h != "" && !IsLoopbackHost(h) {
			out = append(out, h)
		}
	}
	return out
}

// Running is a server started by Start.
type Running struct {
	srv  *http.Server
	done chan struct{}
	err  error
}

// Start serves h on ln (with NewServer's timeouts) in the background.
func Start(ln net.Listener, h http.Handler) *Running {
	r := &Running{srv: NewServer(h), done: make(chan struct{})}
	go func() {
		r.err = r.srv.Serve(ln)
		close(r.done)
	}()
	return r
}

// Done is closed when the server stopped serving (after Stop, or when its
// listener failed).
func (r *Running) Done() <-chan struct{} { return r.done }

// Stop shuts the server down, letting requests in flight finish for up to
// grace before closing their connections, and waits until it has stopped.
func (r *Running) Stop(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		_ = r.srv.Close()
	}
	<-r.done
}
