package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/provider/preset"
	"github.com/traceforge/traceforge/internal/snapshot"
)

type initOptions struct {
	IO      *IOStreams
	Factory *Factory
	CI      string
	Force   bool
	// Defaults is the request-defaults preset written into the config
	// (init --defaults): deterministic or provider.
	Defaults string
}

func newInitCmd(f *Factory, runF func(*initOptions) error) *cobra.Command {
	o := &initOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "init [--defaults deterministic|provider] [--ci github] [--force]",
		Short: "Set a project up for traceforge: empty snapshot set, config, Git merge driver, CI",
		Long: `init prepares the project (the parent of --dir) for a team:

  .ai-snapshots/manifest.json   a valid empty snapshot set
  .traceforge.json              the policy config: request defaults that make an
                                app's unchanged calls recordable (docs/record.md,
                                "Recording an existing app"), the exceptions they
                                need, fail_on (docs/team.md explains it)
  --defaults deterministic      (the default) temperature 0, a seed, a max-tokens
                                value on every endpoint; models that accept only
                                their default sampling get it plus an exception
  --defaults provider           the providers' own default values: every call
                                behaves as without the field; determinism relaxed
                                for every model by one reported exception
  .gitignore                    the runtime files (lock, temp files) are ignored
  .gitattributes                manifest.json is merged by the traceforge driver
  git config                    merge.traceforge-manifest.driver, inside a Git work tree
                                (outside one, init prints the command to run)
  --ci github                   .github/workflows/traceforge.yml: static verify with
                                annotations, replay with JUnit, the HTML diff report

Running init again changes nothing. A file you changed is never overwritten:
init says which file it kept and exits 0; --force replaces it. An existing
snapshot set is never touched, not even with --force.`,
		Example: "  traceforge init\n  traceforge init --defaults provider\n  traceforge init --ci github",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return initRun(o)
		},
	}
	cmd.Flags().StringVar(&o.CI, "ci", "", "also write a CI workflow: github")
	cmd.Flags().StringVar(&o.Defaults, "defaults", string(preset.Deterministic), "request defaults preset written into .traceforge.json: deterministic or provider")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace files that differ from what init writes (never the snapshot set)")
	return cmd
}

// gitignoreLines are the runtime files of a snapshot folder named dir (DESIGN §10).
func gitignoreLines(dir string) []string {
	return []string{dir + "/.lock", dir + "/**/.*.tmp-*", dir + "/.migrate-tmp/"}
}

func initRun(o *initOptions) error {
	if o.CI != "" && o.CI != "github" {
		return usageErr("use --ci github", "unknown --ci %q", o.CI)
	}
	pre, ok := preset.Get(preset.Kind(o.Defaults))
	if !ok {
		return usageErr("use --defaults deterministic (the default) or --defaults provider", "unknown --defaults %q", o.Defaults)
	}
	proj, err := project.Locate(o.Factory.Dir, project.Options{Base: o.IO.Dir})
	if err != nil {
		return projectErr(err)
	}
	dir, display, root := proj.Dir, proj.Display, proj.Root
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usageErr("create the project folder first, or point --dir into it", "project root %s does not exist", root)
	}
	name := filepath.Base(dir)
	out := o.IO.Out
	rel := func(p string) string {
		if r, err := filepath.Rel(o.IO.workDir(), p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	var kept []string

	// 1. The snapshot set: created when absent, never touched when present.
	switch state, err := initSet(dir); {
	case err != nil:
		return withCode(ExitFailed, fmt.Errorf("create %s: %w", display, err), "check that the project folder is writable")
	default:
		fmt.Fprintf(out, "%-9s %s\n", state, path.Join(display, snapshot.ManifestName))
	}

	// 2. Templates: unchanged, created, kept (changed by the user) or replaced (--force).
	put := func(p string, content []byte) error {
		state, err := writeTemplate(p, content, o.Force)
		if err != nil {
			return withCode(ExitFailed, fmt.Errorf("write %s: %w", rel(p), err), "check that the project folder is writable")
		}
		if state == "kept" {
			kept = append(kept, rel(p))
			fmt.Fprintf(out, "%-9s %s (it differs from what init writes; --force replaces it)\n", state, rel(p))
			return nil
		}
		fmt.Fprintf(out, "%-9s %s\n", state, rel(p))
		return nil
	}
	if err := put(filepath.Join(root, check.ConfigName), []byte(configTemplate(pre))); err != nil {
		return err
	}
	reportPreset(out, pre)

	// 3. Line files: missing lines are appended, nothing is removed.
	for _, lf := range []struct {
		file  string
		lines []string
	}{
		{".gitignore", gitignoreLines(name)},
		{".gitattributes", []string{name + "/" + snapshot.ManifestName + " merge=" + MergeDriverName}},
	} {
		p := filepath.Join(root, lf.file)
		state, err := appendLines(p, "# traceforge", lf.lines)
		if err != nil {
			return withCode(ExitFailed, fmt.Errorf("update %s: %w", rel(p), err), "check that the project folder is writable")
		}
		fmt.Fprintf(out, "%-9s %s\n", state, rel(p))
	}

	// 4. The merge driver, in the repository's own config.
	top, inGit := gitTopLevel(root)
	if inGit {
		state, err := configureDriver(root, o.Force)
		if err != nil {
			return withCode(ExitFailed, err, "run it yourself: git config merge."+MergeDriverName+".driver \""+MergeDriverCommand+"\"")
		}
		if state == "kept" {
			kept = append(kept, "git config merge."+MergeDriverName+".driver")
			fmt.Fprintf(out, "%-9s git config merge.%s.driver (it is set to another command; --force replaces it)\n", state, MergeDriverName)
		} else {
			fmt.Fprintf(out, "%-9s git config merge.%s.driver\n", state, MergeDriverName)
		}
	} else {
		fmt.Fprintf(out, "%-9s git config: %s is not inside a Git work tree; after git init, run:\n", "skipped", rel(root))
		fmt.Fprintf(out, "  git config merge.%s.driver \"%s\"\n", MergeDriverName, MergeDriverCommand)
		top = root
	}

	// 5. CI.
	if o.CI == "github" {
		wf := filepath.Join(top, ".github", "workflows", "traceforge.yml")
		sub, _ := filepath.Rel(top, root)
		if err := put(wf, []byte(githubWorkflow(root, filepath.ToSlash(sub), name))); err != nil {
			return err
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "traceforge: kept %d changed file(s): %s; rerun with --force to replace them\n", len(kept), strings.Join(kept, ", "))
	}
	fmt.Fprintf(out, "\nNext: traceforge record -- <your test command>, then commit %s.\n", display)
	return nil
}

// workDir is the directory relative paths are shown from.
func (s *IOStreams) workDir() string {
	if s.Dir != "" {
		return s.Dir
	}
	wd, _ := os.Getwd()
	return wd
}

// initSet creates an empty snapshot set in dir unless one (or any snapshot
// file) is there.
func initSet(dir string) (string, error) {
	if _, err := os.Lstat(filepath.Join(dir, snapshot.ManifestName)); err == nil {
		return "exists", nil
	}
	if es, err := os.ReadDir(dir); err == nil {
		for _, e := range es {
			if !strings.HasPrefix(e.Name(), ".") {
				return "", fmt.Errorf("the folder holds files but no %s; run traceforge snapshot reindex to index them", snapshot.ManifestName)
			}
		}
	}
	st := &snapshot.Store{Dir: dir}
	if _, err := st.WriteManifest(nil, nil, now()); err != nil {
		return "", err
	}
	return "created", nil
}

// writeTemplate writes content to p unless p holds something else (kept;
// replaced with force).
func writeTemplate(p string, content []byte, force bool) (string, error) {
	cur, err := os.ReadFile(p)
	switch {
	case err == nil && bytes.Equal(cur, content):
		return "unchanged", nil
	case err == nil && !force:
		return "kept", nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	state := "created"
	if err == nil {
		state = "replaced"
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	st := &snapshot.Store{Dir: filepath.Dir(p)}
	return state, st.WriteAtomic(filepath.Base(p), content)
}

// appendLines adds the lines p lacks (under a comment header), keeping
// everything already there.
func appendLines(p, header string, lines []string) (string, error) {
	cur, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(cur), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range lines {
		if !have[l] {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return "unchanged", nil
	}
	var b bytes.Buffer
	b.Write(cur)
	if len(cur) > 0 && !bytes.HasSuffix(cur, []byte("\n")) {
		b.WriteByte('\n')
	}
	if !have[header] {
		b.WriteString(header + "\n")
	}
	for _, l := range add {
		b.WriteString(l + "\n")
	}
	state := "updated"
	if cur == nil {
		state = "created"
	}
	st := &snapshot.Store{Dir: filepath.Dir(p)}
	return state, st.WriteAtomic(filepath.Base(p), b.Bytes())
}

// gitTopLevel returns the top of the Git work tree holding dir.
func gitTopLevel(dir string) (string, bool) {
	cmd := exec.Command("git", "rev-parse", "--show-toplevel")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// configureDriver sets the manifest merge driver in the repository config.
func configureDriver(dir string, force bool) (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil && stderr.Len() > 0 {
			err = fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), err
	}
	key := "merge." + MergeDriverName + ".driver"
	cur, _ := git("config", "--get", key)
	state := "configured"
	switch {
	case cur == MergeDriverCommand:
		return "unchanged", nil
	case cur != "" && !force:
		return "kept", nil
	case cur != "":
		state = "replaced"
	}
	if _, err := git("config", "merge."+MergeDriverName+".name", "traceforge manifest merge"); err != nil {
		return "", err
	}
	if _, err := git("config", key, MergeDriverCommand); err != nil {
		return "", err
	}
	return state, nil
}
