package record

import (
	"net/http"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
)

// foreignCredential reports a credential in req that belongs to another
// family than the upstream req would be forwarded to (SECURITY.md,
// "Credentials stay with their provider"). The upstream is the call's exact
// target when Config.Target names one (the Go transport: the URL the client
// itself asked for; only a host known to be another family's is checked),
// else the configured upstream of route — whose family is its host's when
// it is a known provider host (api.openai.com, an Azure resource, …). On
// a route a provider serves (served) whose upstream is another host, the
// user pointed that provider at a gateway of their own and nothing is
// refused; on an unserved route the upstream is a guess, and its family is
// the provider's.
func (r *Recorder) foreignCredential(req *http.Request, route provider.Name, served bool) (provider.Credential, string, bool) {
	var to provider.Family
	var name string
	if t := r.target(req); t != nil {
		f, ok := provider.FamilyOfHost(t.Hostname())
		if !ok {
			return provider.Credential{}, "", false
		}
		to, name = f, t.Hostname()
	} else {
		u := r.upstreamFor(req.URL.Path, route)
		to, name = registry.Provider(route).Family, string(route)
		f, known := provider.FamilyOfHost(u.Hostname())
		switch {
		case known:
			to = f
		case served:
			// The route names its provider and the user pointed that
			// provider at a gateway of their own: the app's credential
			// is meant for it.
			return provider.Credential{}, "", false
		}
	}
	cred, ok := provider.ForeignCredential(req.Header, req.URL.Query(), to)
	return cred, name, ok
}

// refuseForeign answers a call carrying another provider's credential: 404
// in the error shape of the provider it would have gone to, naming the
// credential's kind (never its value) and the routes traceforge serves;
// nothing is dialled, and the run lists the call and exits 1.
func (r *Recorder) refuseForeign(w http.ResponseWriter, req *http.Request, c *call, cred provider.Credential, to string) {
	msg := req.Method + " " + req.URL.Path + " carries " + cred.Kind +
		", a credential of another provider than the " + to + " upstream it would be forwarded to: refused, nothing was sent"
	r.addProblem(&problem{Kind: KindForeignCredential, Call: c.describe(),
		Message: msg,
		Fix:     "traceforge forwards a call only to its own provider's upstream; it records " + registry.Served() + ". Make this call outside the recorded run, or point the client at a route traceforge serves; see SECURITY.md"})
	provider.WriteStatusError(w, registry.ErrorFormat(req), http.StatusNotFound,
		"traceforge record: "+msg+". It records "+registry.Served())
}

// refuseNoCredential answers a call of a provider that signs upstream with
// traceforge's own credentials (Bedrock) when the call carries none of the
// application's: 403 in the provider's error shape, nothing sent, listed
// (KindNoCredential). Only a process that holds credentials of its own —
// an AWS SDK signs every call — gets its call signed with traceforge's.
func (r *Recorder) refuseNoCredential(w http.ResponseWriter, req *http.Request, c *call, d *provider.Descriptor) {
	msg := req.Method + " " + req.URL.Path + " carries no " + d.Title + " credential (no SigV4 signature, presigned query or API key): traceforge signs upstream calls with its own credentials only for a client that signed its call; refused, nothing was sent"
	r.addProblem(&problem{Kind: KindNoCredential, Call: c.describe(), Message: msg,
		Fix: "call through the provider's SDK (it signs every call; any credentials do, replay gives dummy ones), or give the application AWS credentials; see SECURITY.md"})
	provider.WriteStatusError(w, registry.ErrorFormat(req), http.StatusForbidden, "traceforge record: "+msg)
}
