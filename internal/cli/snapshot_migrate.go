package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/migrate"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/snapshot"
)

type migrateOptions struct {
	IO      *IOStreams
	Factory *Factory
	From    string
	To      string
	DryRun  bool
}

func newSnapshotMigrateCmd(f *Factory, runF func(*migrateOptions) error) *cobra.Command {
	if runF == nil {
		runF = migrateRun
	}
	o := &migrateOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "migrate --from VERSION --to VERSION [--dry-run]",
		Short: "Migrate a snapshot set to another format version",
		Long: `migrate moves the snapshot set in --dir from one format version to another,
all or nothing. Every old hash is verified first: an edited set is refused.
A record that cannot be migrated without inventing data (no source.function,
a tool-call finish reason, an unknown provider, a determinism-policy
violation, two different answers to one request) stops the migration; every
such record is listed and nothing is written.

The new files are staged in .ai-snapshots/.migrate-tmp, renamed in, and the
manifest is written last (the commit point); only then is the old file
removed. If the migration is interrupted, run it again: it finishes the job.
On a set that is already migrated it says there is nothing to do.

Supported: ` + strings.Join(migrate.Default().Supported(), ", ") + `

Exit codes: 0 migrated or nothing to do, 1 refused (edited or un-migratable
records), 2 usage (unknown versions, missing folder, folder locked).`,
		Example: "  traceforge snapshot migrate --from 0.9.0 --to 1.0.0 --dry-run\n  traceforge snapshot migrate --from 0.9.0 --to 1.0.0",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return runF(o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.From, "from", "", "format version of the set now (e.g. 0.9.0)")
	fl.StringVar(&o.To, "to", "", "format version to migrate to (e.g. "+snapshot.Version+")")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print the plan (records, target files, problems) and write nothing")
	return cmd
}

func migrateRun(o *migrateOptions) error {
	supported := "supported: " + strings.Join(migrate.Default().Supported(), ", ")
	if o.From == "" || o.To == "" {
		return usageErr("e.g. traceforge snapshot migrate --from 0.9.0 --to "+snapshot.Version+" ("+supported+")", "--from and --to are both required")
	}
	proj, err := o.Factory.OpenProject()
	if err != nil {
		return err
	}
	display := proj.Display
	res, err := migrate.Run(migrate.Options{
		Dir: proj.Dir, Display: display, From: o.From, To: o.To, DryRun: o.DryRun,
		Check: proj.CheckOptions(),
		Now:   now,
	})
	var refused *migrate.RefusedError
	switch {
	case err == nil:
		render.Migrate(o.IO.Out, res)
		if res.Done {
			fmt.Fprintf(o.IO.Out, "\nMigrated %s to format %s; run traceforge verify, then commit the folder.\n", display, o.To)
		}
		return nil
	case errors.As(err, &refused):
		if res != nil && (o.DryRun || !refused.Written) && len(res.Steps) > 0 {
			render.Migrate(o.IO.Out, res)
		} else {
			fmt.Fprintf(o.IO.ErrOut, "Problems (%d):\n", len(refused.Problems))
			_ = render.WriteMigrateProblems(o.IO.ErrOut, display, refused.Problems)
		}
		hint := "fix or re-record the records listed above, then rerun; nothing was changed"
		if refused.Written {
			hint = "the new files and manifest are in place but do not verify; run traceforge verify for details"
		}
		return withCode(ExitFailed, err, hint)
	case errors.Is(err, migrate.ErrNoPath), errors.Is(err, migrate.ErrTarget):
		return usageErr(supported, "%v", err)
	case errors.Is(err, migrate.ErrNoFolder):
		return withCode(ExitUsage, fmt.Errorf("snapshot folder %s does not exist", display), "point --dir at the folder holding snapshots.json")
	case errors.Is(err, migrate.ErrNoSet), errors.Is(err, migrate.ErrVersionMismatch):
		return withCode(ExitUsage, err, "check --dir and --from ("+supported+")")
	case errors.Is(err, migrate.ErrLocked):
		return withCode(ExitUsage, fmt.Errorf("%s is locked by a running traceforge record", display), "wait for it to finish, then rerun")
	default:
		return withCode(ExitFailed, fmt.Errorf("migrate %s: %w", display, err), "nothing is lost: rerun the migration; it finishes an interrupted one")
	}
}
