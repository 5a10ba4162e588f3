package cli

import (
	"errors"
	"os"
	"path/filepath"

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
