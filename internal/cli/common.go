package cli

import (
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/serve"
)

// Factory holds what every command shares: the IO streams and the global
// flags. Each command's constructor takes it (newXCmd(f, runF)).
type Factory struct {
	IO  *IOStreams
	Dir string // --dir
}

// OpenProject opens the snapshot folder of --dir (exit 2 on a bad config).
func (f *Factory) OpenProject() (*project.Project, error) {
	p, err := project.Open(f.Dir, project.Options{Base: f.IO.Dir})
	if err != nil {
		return nil, projectErr(err)
	}
	return p, nil
}

// projectErr gives a project.Error its exit code (2) and hint.
func projectErr(err error) error {
	var pe *project.Error
	if errors.As(err, &pe) {
		return withCode(ExitUsage, pe.Err, pe.Hint())
	}
	return err
}

// commandAfterDash returns the COMMAND of `traceforge NAME [flags] [--
// COMMAND ARGS...]`: nil without --, a usage error for arguments before --
// or for a -- with nothing after it (DESIGN §12.10.6: it would otherwise
// start record's foreground server, or verify with nothing replayed).
func commandAfterDash(cmd *cobra.Command, args []string, name string) ([]string, error) {
	hint := "put the command after --, e.g. traceforge " + name + " -- go test ./..."
	switch n := cmd.ArgsLenAtDash(); {
	case n > 0:
		return nil, usageErr(hint, "unexpected argument %q before --", args[0])
	case n == 0 && len(args) == 0:
		return nil, usageErr(hint+" (or leave out the -- to run without a command)", "-- is not followed by a command")
	case n == 0:
		return args, nil
	case len(args) > 0:
		return nil, usageErr(hint, "unexpected argument %q", args[0])
	}
	return nil, nil
}

// upstreams are the resolved upstream base URLs, one per provider.
type upstreams map[provider.Name]*url.URL

// all lists them in provider order (a provider without a default that was
// given none has none).
func (u upstreams) all() []*url.URL {
	var out []*url.URL
	for _, d := range registry.Providers() {
		if x := u[d.Name]; x != nil {
			out = append(out, x)
		}
	}
	return out
}

// shown lists them for people, in provider order: "A, B, C and D"
// (serve.RedactURL: no user info, query values REDACTED).
func (u upstreams) shown() string {
	var out []string
	for _, x := range u.all() {
		out = append(out, serve.RedactURL(x))
	}
	return andList(out)
}

// strings returns them as Config values (record.Config.Upstreams,
// verify.LiveOptions.Upstreams).
func (u upstreams) strings() map[provider.Name]string {
	out := make(map[provider.Name]string, len(u))
	for p, x := range u {
		out[p] = x.String()
	}
	return out
}

// upstreamFlags defines --<provider>-upstream for every provider
// (Descriptor.UpstreamFlag), storing the values in into; prefix starts
// each help text ("--live: " for verify).
func upstreamFlags(fl *pflag.FlagSet, into map[provider.Name]*string, prefix string) {
	for _, d := range registry.Providers() {
		v := new(string)
		into[d.Name] = v
		def := d.DefaultUpstream
		if def == "" {
			def = "none"
		}
		fl.StringVar(v, d.UpstreamFlag(), "", fmt.Sprintf("%s%s (default $%s, else $%s, else %s)",
			prefix, d.UpstreamHelp, d.UpstreamEnv(), d.BaseURLEnv, def))
	}
}

// baseURLEnvs names every provider's base-URL variable, joined by sep:
// "OPENAI_BASE_URL / ANTHROPIC_BASE_URL / …".
func baseURLEnvs(sep string) string {
	var out []string
	for _, d := range registry.Providers() {
		out = append(out, d.BaseURLEnv)
		for _, v := range d.MoreBaseURLEnv {
			out = append(out, v.Name)
		}
	}
	return strings.Join(out, sep)
}

// upstreamFlagList names every --<provider>-upstream flag, without dashes.
func upstreamFlagList() []string {
	var out []string
	for _, d := range registry.Providers() {
		out = append(out, d.UpstreamFlag())
	}
	return out
}

// providerTitles lists the providers for help texts: "A, B, C and D".
func providerTitles() string {
	var out []string
	for _, d := range registry.Providers() {
		out = append(out, d.Title)
	}
	return andList(out)
}

// defaultUpstreams lists each provider's default upstream for help texts.
func defaultUpstreams() string {
	var out []string
	for _, d := range registry.Providers() {
		def := d.DefaultUpstream
		if def == "" {
			def = "none, required for its calls"
		}
		out = append(out, d.Title+": "+def)
	}
	return strings.Join(out, "; ")
}

// replayKeyEnvs lists the key placeholders replay may set (keyEnv).
func replayKeyEnvs() string {
	var out []string
	for _, d := range registry.Providers() {
		if d.ReplayKeyEnv != "" {
			out = append(out, d.ReplayKeyEnv)
		}
	}
	return andList(out)
}

// liveKeyEnvs lists the variables --live reads keys from.
func liveKeyEnvs() string {
	var out []string
	for _, d := range registry.Providers() {
		out = append(out, strings.Join(d.KeyEnv, " or "))
	}
	return strings.Join(out, " / ")
}

// andList joins "a", "b", "c" as "a, b and c".
func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// wrap reflows each paragraph of a help text to 80 columns; a paragraph
// with an indented line (an example) is kept as it is.
func wrap(text string) string {
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		if strings.Contains("\n"+p, "\n ") {
			continue
		}
		var b strings.Builder
		n := 0
		for _, w := range strings.Fields(p) {
			switch {
			case n == 0:
			case n+1+len([]rune(w)) > 80:
				b.WriteByte('\n')
				n = 0
			default:
				b.WriteByte(' ')
				n++
			}
			b.WriteString(w)
			n += len([]rune(w))
		}
		paras[i] = b.String()
	}
	return strings.Join(paras, "\n\n")
}

// noCallsHint says why a command run may have recorded nothing: no call
// reached traceforge, so the application's SDKs did not use the base URLs
// it was given (one line per provider: the variable and its value), and
// what to do. record's exit code is unchanged (a run whose tests make no
// LLM call is fine).
func noCallsHint(w io.Writer, addr string) {
	fmt.Fprintln(w, "traceforge: warning: no call reached traceforge: the command's LLM clients did not use the base URLs it was given:")
	for _, kv := range registry.CommandEnv(addr) {
		fmt.Fprintln(w, "  "+kv)
	}
	fmt.Fprintln(w, "traceforge: hint: an SDK that ignores these variables needs its base URL set in code (docs/record.md, \"Which SDK reads which variable\"); "+
		"--deny-bypass makes calls that go around traceforge fail visibly")
}

// resolveUpstreams picks each provider's upstream base URL (DESIGN §11,
// §12.2): the flag, else TRACEFORGE_<P>_UPSTREAM, else the base URL the
// provider's SDKs read that is already in the environment
// (Descriptor.BaseURLEnv, then MoreBaseURLEnv without its path — an app
// pointed at vLLM, a gateway or a remote Ollama is recorded against it),
// else the provider's default upstream.
// record and verify --live share it.
func resolveUpstreams(io *IOStreams, flags map[provider.Name]*string) (upstreams, error) {
	u := upstreams{}
	for _, d := range registry.Providers() {
		v, from := "", "--"+d.UpstreamFlag()
		if f := flags[d.Name]; f != nil {
			v = *f
		}
		if v == "" {
			v, from = io.Getenv(d.UpstreamEnv()), d.UpstreamEnv()
		}
		if v == "" {
			v, from = io.Getenv(d.BaseURLEnv), d.BaseURLEnv
			if d.ParseBaseURL != nil {
				v = d.ParseBaseURL(v)
			}
		}
		for _, b := range d.MoreBaseURLEnv {
			if v == "" {
				v, from = strings.TrimSuffix(strings.TrimSuffix(io.Getenv(b.Name), "/"), b.Path), b.Name
			}
		}
		if v == "" && d.DefaultUpstream == "" {
			continue // none: the provider's calls are refused, naming the flag (Azure OpenAI)
		}
		if v == "" {
			v, from = d.DefaultUpstream, "default"
		}
		x, err := serve.ParseUpstream(v, d.DefaultUpstream)
		if err != nil {
			return nil, usageErr("e.g. "+from+" "+d.DefaultUpstream, "%s upstream (from %s): %v", strings.ToUpper(string(d.Name)), from, err)
		}
		u[d.Name] = x
	}
	return u, nil
}
