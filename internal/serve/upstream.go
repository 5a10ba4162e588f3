package serve

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The public APIs, used when no upstream is configured. The OpenAI base
// includes /v1, the others do not (the SDKs append /v1/messages,
// /v1beta/models/…, /api/chat). Ollama's is the local server's default.
const (
	DefaultOpenAIUpstream    = "https://api.openai.com/v1"
	DefaultAnthropicUpstream = "https://api.anthropic.com"
	DefaultGeminiUpstream    = "https://generativelanguage.googleapis.com"
	DefaultOllamaUpstream    = "http://127.0.0.1:11434"
)

// OllamaHostURL turns an OLLAMA_HOST value into a base URL the way Ollama's
// clients read it: "host:port", "host", ":port" or a full URL; the scheme
// defaults to http, the port to 11434 (80 or 443 for an explicit http:// or
// https://), the host to 127.0.0.1. "" stays "".
func OllamaHostURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	port := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	} else if n, err := strconv.Atoi(p); err == nil && n > 0 && n < 65536 {
		port = p
	}
	if host == "" {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u.String()
}

// ParseUpstream validates an upstream base URL ("" = def): http or https,
// a host, no credentials; a trailing slash is dropped.
func ParseUpstream(s, def string) (*url.URL, error) {
	if s == "" {
		s = def
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q must be an http:// or https:// URL", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q must not carry credentials; the application's own API key is passed through", RedactURL(u))
	}
	u.Fragment = ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// RedactURL renders u without its user info.
func RedactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
