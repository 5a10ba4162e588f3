package ollama

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Descriptor describes Ollama (DESIGN §13.1). Its clients read OLLAMA_HOST
// (host:port or a URL) and append /api/…; the upstream defaults to the
// local server, which needs no key (OLLAMA_API_KEY, for a hosted one, is
// sent as a bearer token when set).
var Descriptor = &provider.Descriptor{
	Name:            provider.Ollama,
	Title:           "Ollama",
	Family:          provider.FamilyOllama,
	Since:           "1.1.0",
	Formats:         []provider.Format{NewChat(), NewGenerate(), NewEmbed()},
	UpstreamHelp:    "Ollama server URL",
	DefaultUpstream: "http://127.0.0.1:11434",
	BaseURLEnv:      "OLLAMA_HOST",
	ParseBaseURL:    HostURL,
	KeyEnv:          []string{"OLLAMA_API_KEY"},
	KeyOptional:     true,
	LiveAuth: func(h http.Header, key string) {
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
	},
	Clients: []provider.Client{
		{Match: []string{"ollama-js"}, Name: "the ollama npm package", Lang: provider.LangNode},
		{Match: []string{"ollama/"}, Name: "a Go client", Lang: provider.LangGo}, // the ollama api package
	},
	GoModules: []string{"github.com/ollama/ollama"},
	Usage:     usage,
}

// usage: a missing counter counts 0; there is no total member.
func usage(_ string, c map[string]int64) (provider.TokenUsage, bool) {
	if !provider.Has(c, "prompt_eval_count", "eval_count") {
		return provider.TokenUsage{}, false
	}
	return provider.TokenUsage{Input: c["prompt_eval_count"], Output: c["eval_count"], Split: true}.WithTotal(c, ""), true
}

// HostURL turns an OLLAMA_HOST value into a base URL the way Ollama's
// clients read it: "host:port", "host", ":port" or a full URL; the scheme
// defaults to http, the port to 11434 (80 or 443 for an explicit http:// or
// https://), the host to 127.0.0.1. "" stays "".
func HostURL(s string) string {
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
