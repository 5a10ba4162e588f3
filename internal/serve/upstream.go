package serve

import (
	"fmt"
	"net/url"
	"strings"
)

// The public APIs, used when no upstream is configured. The OpenAI base
// includes /v1, the Anthropic one does not (the SDKs append /v1/messages).
const (
	DefaultOpenAIUpstream    = "https://api.openai.com/v1"
	DefaultAnthropicUpstream = "https://api.anthropic.com"
)

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
