package registry

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
)

// Named upstreams (DESIGN §13.5, --upstream NAME=URL): several
// OpenAI-compatible hosts in one run. A call under /u/NAME/… is an
// OpenAI-wire call forwarded to NAME's URL (its path prefix, /openai/v1,
// /api/v1 or /engines/v1, kept); its snapshot goes to openai/ with
// "/u/NAME" before the key endpoint, so the same request to two hosts is
// two snapshots. COMMAND gets TRACEFORGE_<NAME>_BASE_URL pointing at
// /u/NAME/v1 (the /v1 that OPENAI_BASE_URL also ends in).

// NamedPrefix starts the paths of named upstreams.
const NamedPrefix = "/u/"

// nameRE is what an upstream name may be: it becomes a path segment and,
// upper-cased with - as _, part of an environment variable.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// ValidUpstreamName reports why name cannot name an upstream: it must be
// lowercase letters, digits, - and _ (a path segment, part of a variable
// name), and no provider's name (their upstreams have their own flags).
func ValidUpstreamName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("upstream name %q must be 1 to 32 lowercase letters, digits, - or _, starting with a letter or digit", name)
	}
	if Provider(provider.Name(name)) != nil {
		return fmt.Errorf("upstream name %q is a provider's: use --%s-upstream", name, name)
	}
	return nil
}

// SplitNamed splits a path under a named upstream, /u/NAME/rest, into NAME
// and /rest; ok is false for any other path.
func SplitNamed(path string) (name, rest string, ok bool) {
	after, found := strings.CutPrefix(path, NamedPrefix)
	if !found {
		return "", "", false
	}
	name, rest, found = strings.Cut(after, "/")
	if !found || !nameRE.MatchString(name) {
		return "", "", false
	}
	return name, "/" + rest, true
}

// BaseEndpoint is a key endpoint without its named upstream's /u/NAME
// (what request defaults and usage rules match).
func BaseEndpoint(e provider.Endpoint) provider.Endpoint {
	if _, rest, ok := SplitNamed(string(e)); ok {
		return provider.Endpoint(rest)
	}
	return e
}

// NamedBaseURLEnv is the variable COMMAND gets for the upstream named
// name: TRACEFORGE_<NAME>_BASE_URL.
func NamedBaseURLEnv(name string) string {
	return "TRACEFORGE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_BASE_URL"
}

// NamedEnv is what COMMAND gets for a traceforge server at addr and the
// named upstreams: TRACEFORGE_<NAME>_BASE_URL=http://addr/u/NAME/v1 each.
func NamedEnv(addr string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, NamedBaseURLEnv(n)+"=http://"+addr+NamedPrefix+n+Default().VersionPrefix)
	}
	return out
}

// NamedUpstreamHelp is the help text of --upstream.
const NamedUpstreamHelp = "a named OpenAI-compatible upstream, NAME=URL with its version path (repeatable): calls under /u/NAME/ go to URL, snapshots in openai/ keyed with NAME, COMMAND gets TRACEFORGE_<NAME>_BASE_URL"

// NamedUpstreamExample is how --upstream is given, for usage errors.
const NamedUpstreamExample = "e.g. --upstream groq=https://api.groq.com/openai/v1"

// UnknownNameFix is the fix of a call under /u/NAME/ that no --upstream
// names.
func UnknownNameFix(name string) string {
	return "give --upstream " + name + "=URL (an OpenAI-compatible base URL with its version path, e.g. https://api.groq.com/openai/v1), or point the client at " + NamedBaseURLEnv(name)
}
