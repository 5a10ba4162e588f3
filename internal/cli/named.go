package cli

import (
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/serve"
)

// namedUpstreamFlag defines --upstream NAME=URL (repeatable): several
// OpenAI-compatible hosts in one run (DESIGN §13.5, registry's named.go).
func namedUpstreamFlag(fl *pflag.FlagSet, into *[]string) {
	fl.StringArrayVar(into, "upstream", nil, registry.NamedUpstreamHelp)
}

// parseNamedUpstreams checks the --upstream values: NAME=URL, each name
// once and valid (registry.ValidUpstreamName), each URL an upstream.
func parseNamedUpstreams(vals []string) (map[string]string, []string, error) {
	out := map[string]string{}
	for _, v := range vals {
		name, u, ok := strings.Cut(v, "=")
		if !ok || name == "" || u == "" {
			return nil, nil, usageErr(registry.NamedUpstreamExample, "--upstream takes NAME=URL")
		}
		if err := registry.ValidUpstreamName(name); err != nil {
			return nil, nil, usageErr(registry.NamedUpstreamExample, "--upstream: %v", err)
		}
		if _, dup := out[name]; dup {
			return nil, nil, usageErr("give each name once", "--upstream: %s is named twice", name)
		}
		x, err := serve.ParseUpstream(u, "")
		if err != nil {
			return nil, nil, usageErr(registry.NamedUpstreamExample, "--upstream %s: %v", name, err)
		}
		out[name] = x.String()
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	return out, names, nil
}
