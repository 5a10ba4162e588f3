package cli

import (
	"errors"
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

// upstreamFlags are the --<provider>-upstream flags record and verify
// --live share ("" = not given).
type upstreamFlags struct{ OpenAI, Anthropic, Gemini, Ollama string }

// upstreams are the resolved upstream base URLs, one per provider.
type upstreams struct{ OpenAI, Anthropic, Gemini, Ollama *url.URL }

// all lists them in provider order.
func (u *upstreams) all() []*url.URL { return []*url.URL{u.OpenAI, u.Anthropic, u.Gemini, u.Ollama} }

// resolveUpstreams picks each provider's upstream base URL (DESIGN §11,
// §12.2): the flag, else TRACEFORGE_<P>_UPSTREAM, else the base URL the
// provider's SDKs read that is already in the environment (OPENAI_BASE_URL,
// ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, OLLAMA_HOST — an app pointed
// at vLLM, a gateway or a remote Ollama is recorded against it), else the
// public API (Ollama: the local server). record and verify --live share it.
func resolveUpstreams(io *IOStreams, flags upstreamFlags) (*upstreams, error) {
	pick := func(flag, name, sdkEnv, def string) (*url.URL, error) {
		v, from := flag, "--"+strings.ToLower(name)+"-upstream"
		if v == "" {
			v, from = io.Getenv("TRACEFORGE_"+name+"_UPSTREAM"), "TRACEFORGE_"+name+"_UPSTREAM"
		}
		if v == "" {
			v, from = io.Getenv(sdkEnv), sdkEnv
			if sdkEnv == "OLLAMA_HOST" {
				v = serve.OllamaHostURL(v) // host:port without a scheme
			}
		}
		if v == "" {
			v, from = def, "default"
		}
		u, err := serve.ParseUpstream(v, def)
		if err != nil {
			return nil, usageErr("e.g. "+from+" "+def, "%s upstream (from %s): %v", name, from, err)
		}
		return u, nil
	}
	var u upstreams
	var err error
	if u.OpenAI, err = pick(flags.OpenAI, "OPENAI", "OPENAI_BASE_URL", serve.DefaultOpenAIUpstream); err != nil {
		return nil, err
	}
	if u.Anthropic, err = pick(flags.Anthropic, "ANTHROPIC", "ANTHROPIC_BASE_URL", serve.DefaultAnthropicUpstream); err != nil {
		return nil, err
	}
	if u.Gemini, err = pick(flags.Gemini, "GEMINI", "GOOGLE_GEMINI_BASE_URL", serve.DefaultGeminiUpstream); err != nil {
		return nil, err
	}
	if u.Ollama, err = pick(flags.Ollama, "OLLAMA", "OLLAMA_HOST", serve.DefaultOllamaUpstream); err != nil {
		return nil, err
	}
	return &u, nil
}
