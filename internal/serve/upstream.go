package serve

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
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
		// The value is not quoted: it may hold a key, and an unparsable
		// URL cannot be redacted.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("the value is not a URL (%v)", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q must be an http:// or https:// URL", RedactURL(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", RedactURL(u))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q must not carry credentials; the application's own API key is passed through", RedactURL(u))
	}
	u.Fragment = ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// Redacted replaces every query value of an upstream URL when it is shown.
const Redacted = "REDACTED"

// RedactURL renders an upstream URL for people — banners, summaries, error
// bodies sent to the application, live reports, refusal messages: without
// its user info, and with every query value replaced by REDACTED (names
// kept, a bare entry replaced whole), since gateways take keys there
// (?api-key=…) (DESIGN §12.10.4). It is the one function that shows an
// upstream URL; RedactURLIn applies it inside a text.
func RedactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			if name, _, ok := strings.Cut(p, "="); ok {
				parts[i] = name + "=" + Redacted
			} else if p != "" {
				parts[i] = Redacted
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// RedactURLIn returns text (an error's text, which may quote the URL a
// request went to) with every credential of each of urls replaced: the URL
// as written becomes RedactURL's form, and any query value, user name or
// password left on its own becomes REDACTED.
func RedactURLIn(text string, urls ...*url.URL) string {
	for _, u := range urls {
		if u == nil {
			continue
		}
		text = strings.ReplaceAll(text, u.String(), RedactURL(u))
		var secrets []string
		if u.User != nil {
			secrets = append(secrets, u.User.Username())
			if p, ok := u.User.Password(); ok {
				secrets = append(secrets, p)
			}
		}
		for _, p := range strings.Split(u.RawQuery, "&") {
			_, v, ok := strings.Cut(p, "=")
			if !ok {
				v = p
			}
			secrets = append(secrets, v)
			if dv, err := url.QueryUnescape(v); err == nil {
				secrets = append(secrets, dv)
			}
		}
		// Longest first, so that no part of a longer secret survives.
		sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
		for _, v := range secrets {
			if len(v) >= 4 && v != Redacted {
				text = strings.ReplaceAll(text, v, Redacted)
			}
		}
	}
	return text
}
