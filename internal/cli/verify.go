package cli

import (
	"bytes"
	"errors"
	"fmt"

	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/verify"
)

func init() { subcommands = append(subcommands, newVerifyCmd) }

// verifyOptions are the flags of `traceforge verify`.
type verifyOptions struct {
	IO     *IOStreams
	Global *globalOptions

	Format       string
	Output       string
	Shard        string
	FailOnUnused bool
	Command      []string
}

func newVerifyCmd(io *IOStreams, g *globalOptions) *cobra.Command {
	opts := &verifyOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "verify [flags] [-- COMMAND ARGS...]",
		Short: "Check every snapshot and hash; with a command, replay the snapshots to it offline",
		Long: `Without a command, verify runs the static checks over the snapshot set: schema,
version, every record, file and manifest hash, manifest against files, ids against
request keys, the determinism policy and the secret scan. Every problem is
reported with its file, JSON pointer, rule and fix.

Exit codes: 0 verified, 1 verification failed, 2 usage or configuration error,
3 internal error; with a command that fails while verification passes, the
command's own exit code.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n > 0 {
				return usageErr("put the command after --, e.g. traceforge verify -- go test ./...", "unexpected argument %q before --", args[0])
			} else if n == 0 {
				opts.Command = args
			} else if len(args) > 0 {
				return usageErr("put the command after --, e.g. traceforge verify -- go test ./...", "unexpected argument %q", args[0])
			}
			return verifyRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "text", "report format: text, json, junit, github")
	f.StringVar(&opts.Output, "output", "", "write the report to this file instead of standard output")
	f.StringVar(&opts.Shard, "shard", "", "verify only shard K of N (e.g. 2/4), split by snapshot id")
	f.BoolVar(&opts.FailOnUnused, "fail-on-unused", false, "fail when a snapshot was never requested during replay")
	return cmd
}

func validFormat(f string) bool {
	for _, x := range verify.Formats {
		if f == x {
			return true
		}
	}
	return false
}

func verifyRun(o *verifyOptions) error {
	if !validFormat(o.Format) {
		return usageErr("use one of: "+strings.Join(verify.Formats, ", "), "unknown --format %q", o.Format)
	}
	shard, err := verify.ParseShard(o.Shard)
	if err != nil {
		return usageErr("e.g. --shard 1/4 in the first of four CI jobs", "%v", err)
	}
	if shard != nil && len(o.Command) > 0 {
		return usageErr("shard static or --live verification only; replay needs the whole set", "--shard cannot be combined with a command")
	}
	dir, display, root := o.Global.resolveDir(o.IO)
	cfg, err := loadConfig(root)
	if err != nil {
		return err
	}
	rep, _, err := verify.Static(verify.StaticOptions{Dir: dir, Display: display, Config: cfg, CanMigrate: canMigrate, Shard: shard})
	if err != nil {
		if errors.Is(err, verify.ErrNoSnapshotDir) {
			return withCode(ExitUsage, fmt.Errorf("snapshot folder %s does not exist", display), "record snapshots first (traceforge record -- <command>), or point --dir at the folder")
		}
		return withCode(ExitFailed, fmt.Errorf("read %s: %w", display, err), "check the folder's permissions")
	}
	rep.FailOnUnused = o.FailOnUnused
	if len(o.Command) > 0 {
		return usageErr("", "replay (verify -- COMMAND) is not available in this build")
	}
	if err := writeReport(o.IO, rep, o.Format, o.Output); err != nil {
		return err
	}
	if rep.Failed() {
		return silentFail(ExitFailed)
	}
	return nil
}

// canMigrate reports whether snapshot migrate knows a path from version.
var canMigrate = func(version string) bool { return version == "0.9.0" }

// writeReport renders rep to --output (atomically) or standard output.
func writeReport(io *IOStreams, rep *verify.Report, format, output string) error {
	if output == "" {
		return rep.Write(io.Out, format, io.Colour() && format == "text")
	}
	var buf bytes.Buffer
	if err := rep.Write(&buf, format, false); err != nil {
		return err
	}
	if err := writeFileAtomic(output, buf.Bytes()); err != nil {
		return withCode(ExitFailed, fmt.Errorf("write report: %w", err), "check that the folder of --output exists and is writable")
	}
	var sum bytes.Buffer
	_ = rep.Write(&sum, "text", false)
	lines := strings.Split(strings.TrimRight(sum.String(), "\n"), "\n")
	fmt.Fprintln(io.ErrOut, lines[len(lines)-1])
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	st := &snapshot.Store{Dir: filepath.Dir(path)}
	return st.WriteAtomic(filepath.Base(path), data)
}
