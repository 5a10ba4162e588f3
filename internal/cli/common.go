package cli

import (
	"net/url"
	"strings"

	"errors"
	"os"
	"path/filepath"

	"github.com/traceforge/traceforge/internal/serve"

	"github.com/traceforge/traceforge/internal/check"
)

// DefaultDir is the snapshot folder used when --dir is not given.
const DefaultDir = ".ai-snapshots"

// resolveDir returns the snapshot folder (absolute), how to display it, and the project root.
func (g *globalOptions) resolveDir(io *IOStreams) (dir, display, root string) {
	d := g.Dir
	if d == "" {
		d = DefaultDir
	}
	display = filepath.ToSlash(filepath.Clean(d))
	if !filepath.IsAbs(d) {
		base := io.Dir
		if base == "" {
			base, _ = os.Getwd()
		}
		d = filepath.Join(base, d)
	}
	d = filepath.Clean(d)
	return d, display, filepath.Dir(d)
}

// loadConfig reads the project's .traceforge.json (exit 2 on a bad one).
func loadConfig(root string) (*check.Config, error) {
	cfg, err := check.LoadConfig(root)
	if err != nil {
		if errors.Is(err, check.ErrConfig) {
			return nil, withCode(ExitUsage, err, "fix "+check.ConfigName+" (see docs/format.md, \"Policy config\")")
		}
		return nil, err
	}
	return cfg, nil
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
