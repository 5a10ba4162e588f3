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

// resolveUpstreams picks each provider's upstream base URL (DESIGN §11): the
// flag, else TRACEFORGE_<P>_UPSTREAM, else the <P>_BASE_URL already in the
// environment (an app pointed at vLLM or a gateway is recorded against it),
// else the public API. record and verify --live share it.
func resolveUpstreams(io *IOStreams, openaiFlag, anthropicFlag string) (openai, anthropic *url.URL, err error) {
	pick := func(flag, name, def string) (*url.URL, error) {
		v, from := flag, "--"+strings.ToLower(name)+"-upstream"
		if v == "" {
			v, from = io.Getenv("TRACEFORGE_"+name+"_UPSTREAM"), "TRACEFORGE_"+name+"_UPSTREAM"
		}
		if v == "" {
			v, from = io.Getenv(name+"_BASE_URL"), name+"_BASE_URL"
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
	if openai, err = pick(openaiFlag, "OPENAI", serve.DefaultOpenAIUpstream); err != nil {
		return nil, nil, err
	}
	if anthropic, err = pick(anthropicFlag, "ANTHROPIC", serve.DefaultAnthropicUpstream); err != nil {
		return nil, nil, err
	}
	return openai, anthropic, nil
}
