package record

import (
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"

	"github.com/traceforge/traceforge/internal/source"
)

// client is what a request's User-Agent says about the library that sent
// it, and the attribution helper that fits it.
type client struct {
	match  []string // lowercase substrings of the User-Agent, any of them
	name   string   // the library, as the hint names it
	helper string   // how to attribute its calls
}

const (
	nodeHelper = "install the traceforge-source package (helpers/node) and pass fetch: traceforgeFetch() to the client " +
		"(calls a library queues — LangChain, the AI SDK, the Agents SDK — are followed through async causality; " +
		"in tests load traceforge-source/vitest, /jest or node --import traceforge-source/node-test)"
	pythonHelper = "call traceforge_source.install(client) from helpers/python on the SDK's httpx client " +
		"(http_client=httpx.Client(...)); under pytest, -p traceforge_source attributes calls to the running test"
	goHelper = "wrap the SDK's HTTP client with traceforge.SourceTransport (or use traceforge.Transport inside go test)"
)

// helpers are the attribution helpers by language.
var helpers = map[provider.Lang]string{provider.LangNode: nodeHelper, provider.LangPython: pythonHelper, provider.LangGo: goHelper}

// clients is checked in order: each provider's own libraries first
// (Descriptor.Clients), then the more specific generic names (the AI SDK
// and LangChain send through other SDKs' code paths).
var clients = func() []client {
	var out []client
	for _, d := range registry.Providers() {
		for _, c := range d.Clients {
			out = append(out, client{c.Match, c.Name, helpers[c.Lang]})
		}
	}
	return append(out,
		client{[]string{"ai-sdk/"}, "the Vercel AI SDK", nodeHelper},
		client{[]string{"langchain"}, "LangChain JS", nodeHelper},
		client{[]string{"/js "}, "a Node SDK", nodeHelper}, // the official JS SDKs
		client{[]string{"/python ", "python-httpx", "python-requests"}, "a Python client", pythonHelper},
		client{[]string{"/go ", "go-http-client"}, "a Go client", goHelper}, // the official Go SDKs
		client{[]string{"node", "undici"}, "Node's fetch", nodeHelper},
	)
}()

// sourceFix says how to attribute a call that arrived without a source,
// naming the likely library from its User-Agent when one is recognised
// (docs/sources.md has the details).
func sourceFix(userAgent string) string {
	base := "set the " + source.Header + " header on every LLM call"
	ua := strings.ToLower(userAgent)
	if ua != "" {
		for _, c := range clients {
			for _, m := range c.match {
				if strings.Contains(ua, m) {
					return base + ": this call came from " + c.name + " (User-Agent " + clip(userAgent, 60) + "): " + c.helper + " (docs/sources.md)"
				}
			}
		}
	}
	return base + ": in Go " + goHelper + "; in Node " + nodeHelper + "; in Python " + pythonHelper + " (docs/sources.md)"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
