package record

import (
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// upstreamFor is the base URL a call to path goes to: the named upstream
// of a /u/NAME/… path (--upstream NAME=URL), else provider p's (Upstream).
// nil when neither is configured.
func (r *Recorder) upstreamFor(path string, p provider.Name) *url.URL {
	if name, _, ok := registry.SplitNamed(path); ok {
		return r.named[name]
	}
	return r.Upstream(p)
}

// namedRest strips a named upstream's /u/NAME from a path as called and
// as escaped; unchanged when the path is not one.
func namedRest(path, raw string) (string, string) {
	name, rest, ok := registry.SplitNamed(path)
	if !ok {
		return path, raw
	}
	return rest, strings.TrimPrefix(raw, registry.NamedPrefix+name)
}

// refuseUnknownName answers a call under /u/NAME/ when no upstream is
// named NAME: 404 in OpenAI's error shape listing the configured names;
// nothing is sent, and the run lists the call and exits 1.
func (r *Recorder) refuseUnknownName(w http.ResponseWriter, req *http.Request, c *call, name string) {
	names := make([]string, 0, len(r.named))
	for n := range r.named {
		names = append(names, n)
	}
	sort.Strings(names)
	have := "none is configured"
	if len(names) > 0 {
		have = "configured: " + strings.Join(names, ", ")
	}
	msg := req.Method + " " + req.URL.Path + " is for the upstream named " + name + ", and no upstream has that name (" + have + "): refused, nothing was sent"
	fix := registry.UnknownNameFix(name)
	r.addProblem(&problem{Kind: KindUnreachable, Call: c.describe(), Message: msg, Fix: fix})
	provider.WriteStatusError(w, registry.ForProvider(registry.Default().Name), http.StatusNotFound, "traceforge record: "+msg+"; "+fix)
}
