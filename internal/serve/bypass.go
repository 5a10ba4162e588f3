package serve

import (
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Bypass is one destination an application tried to reach through
// traceforge as a forward proxy (CONNECT or an absolute-form request)
// while --deny-bypass was on: the call escaped the SDK's base URL.
type Bypass struct {
	Method string // CONNECT, or the method of the absolute-form request
	Target string // host:port
	Count  int
}

// Bypasses collects the refused proxy-style requests of a run. Safe for
// concurrent use; the zero value is ready.
type Bypasses struct {
	mu   sync.Mutex
	seen map[[2]string]*Bypass
}

// add counts one refused request.
func (b *Bypasses) add(method, target string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[[2]string]*Bypass{}
	}
	k := [2]string{method, target}
	if e := b.seen[k]; e != nil {
		e.Count++
		return
	}
	b.seen[k] = &Bypass{Method: method, Target: target, Count: 1}
}

// List returns the refused destinations sorted by target, then method.
func (b *Bypasses) List() []Bypass {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Bypass, 0, len(b.seen))
	for _, e := range b.seen {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// BypassHint is what to do about a bypass, for every report.
const BypassHint = "the SDK ignored its base URL: set it explicitly (OPENAI_BASE_URL / ANTHROPIC_BASE_URL, or the client's baseURL / base_url option) so the call goes to traceforge; nothing was sent to the real API"

// ProxyEnv returns the variables --deny-bypass gives COMMAND: HTTP_PROXY and
// HTTPS_PROXY (both cases) pointing at the server at addr, and NO_PROXY
// (both cases) for loopback, so that base-URL calls go straight to
// traceforge and anything else arrives as a proxy request to refuse.
func ProxyEnv(addr string) []string {
	u := "http://" + addr
	const loopback = "localhost,127.0.0.1,::1"
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"NO_PROXY=" + loopback, "no_proxy=" + loopback}
}

// GuardOption changes what Guard does.
type GuardOption func(*guardConfig)

type guardConfig struct {
	bypasses *Bypasses
}

// DenyBypass makes Guard answer CONNECT and absolute-form requests with 403
// and count them in b (DESIGN §12.8 "Bypass"), instead of the plain 405/400
// of §10. Nothing is ever tunnelled or dialled either way.
func DenyBypass(b *Bypasses) GuardOption {
	return func(c *guardConfig) { c.bypasses = b }
}

// bypassTarget returns the method and host:port of a proxy-style request
// (ok = false for an ordinary origin-form request).
func bypassTarget(r *http.Request) (method, target string, ok bool) {
	if r.Method == http.MethodConnect {
		t := r.RequestURI
		if t == "" || strings.HasPrefix(t, "/") {
			t = r.Host
		}
		return r.Method, t, true
	}
	if !(r.URL.IsAbs() || r.URL.Host != "" || !strings.HasPrefix(r.RequestURI, "/")) {
		return "", "", false
	}
	host := r.URL.Host
	if host == "" {
		host = r.Host
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if strings.EqualFold(r.URL.Scheme, "https") {
			port = "443"
		}
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return r.Method, host, true
}
