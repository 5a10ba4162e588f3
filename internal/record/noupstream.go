package record

import (
	"net/http"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// refuseNoUpstream answers a call of a provider that has no default
// upstream and was given none (Azure OpenAI: every resource has its own
// host): 502 in the provider's error shape, naming the flag; nothing is
// sent, and the run lists the call and exits 1.
func (r *Recorder) refuseNoUpstream(w http.ResponseWriter, req *http.Request, c *call) {
	d := registry.Provider(c.route)
	msg := req.Method + " " + req.URL.Path + " is a " + d.Title + " call and no " + d.Title + " upstream is configured: refused, nothing was sent"
	fix := "give --" + d.UpstreamFlag() + " (or " + d.UpstreamEnv() + ", or " + d.BaseURLEnv + " in traceforge's own environment): " + d.UpstreamHelp
	r.addProblem(&problem{Kind: KindUnreachable, Call: c.describe(), Message: msg, Fix: fix})
	provider.WriteStatusError(w, registry.ForProvider(c.route), http.StatusBadGateway, "traceforge record: "+msg+"; "+fix)
}
