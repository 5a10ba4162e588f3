package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// MergeDriverName is the Git merge driver init configures for the manifest.
const MergeDriverName = "traceforge-manifest"

// MergeDriverCommand is the driver's command line (%O base, %A ours and the
// result, %B theirs).
const MergeDriverCommand = "traceforge snapshot merge-manifest %O %A %B"

type mergeManifestOptions struct {
	IO      *IOStreams
	Factory *Factory
	Base    string
	Ours    string
	Theirs  string
}

func newSnapshotMergeManifestCmd(f *Factory, runF func(*mergeManifestOptions) error) *cobra.Command {
	o := &mergeManifestOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "merge-manifest BASE OURS THEIRS",
		Short: "Merge three versions of manifest.json (the Git merge driver)",
		Long: `merge-manifest is the Git merge driver for .ai-snapshots/manifest.json
(traceforge init configures it). It merges the entries three-way per snapshot
id: an entry both sides agree on is kept; when one side left an entry as it
was in BASE, the other side's change (addition, new hash or removal) wins.
created_at becomes the earlier and updated_at the later of the two sides, and
the hash is recomputed. The result is written into OURS.

The same snapshot changed differently on both sides (or removed on one side
and changed on the other) is a conflict: every one is listed, OURS is left
untouched and the exit code is 1, so Git reports the manifest as conflicted.
Resolve the snapshot files Git lists, then run traceforge snapshot reindex.

Exit codes: 0 merged, 1 conflict or an invalid manifest, 2 usage.`,
		Example: "  git config merge." + MergeDriverName + ".driver \"" + MergeDriverCommand + "\"",
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Base, o.Ours, o.Theirs = args[0], args[1], args[2]
			if runF != nil {
				return runF(o)
			}
			return mergeManifestRun(o)
		},
	}
}

const mergeHint = "resolve the snapshot files Git lists as conflicted, then run: traceforge snapshot reindex && traceforge verify"

func mergeManifestRun(o *mergeManifestOptions) error {
	read := func(side, p string, emptyOK bool) (*snapshot.Manifest, error) {
		data, err := (&snapshot.Store{Dir: filepath.Dir(p)}).ReadRel(filepath.Base(p), snapshot.MaxManifestSize)
		if err != nil {
			return nil, usageErr("pass three manifest files: BASE OURS THEIRS (Git's %O %A %B)", "%s manifest: %v", side, err)
		}
		if emptyOK && len(data) == 0 {
			return nil, nil // Git passes an empty BASE when the file has no common ancestor
		}
		m, fs := check.ParseManifestAnyTimes(p, data, check.Options{CanMigrate: project.CanMigrate})
		if fs.Errors() > 0 {
			return nil, withCode(ExitFailed, fmt.Errorf("%s manifest %s is invalid: %s", side, p, fs[0].Message),
				"nothing was written; take one side's manifest.json (git checkout --ours or --theirs), then run: traceforge snapshot reindex && traceforge verify")
		}
		return m, nil
	}
	base, err := read("BASE", o.Base, true)
	if err != nil {
		return err
	}
	ours, err := read("OURS", o.Ours, false)
	if err != nil {
		return err
	}
	theirs, err := read("THEIRS", o.Theirs, false)
	if err != nil {
		return err
	}
	merged, err := snapshot.MergeManifests(base, ours, theirs)
	var me *snapshot.MergeError
	switch {
	case errors.As(err, &me):
		for _, c := range me.Conflicts {
			fmt.Fprintf(o.IO.ErrOut, "conflict: %s\n", c)
		}
		return withCode(ExitFailed, fmt.Errorf("manifest.json not merged: %d snapshot(s) changed differently on both sides; %s is left as it was", len(me.Conflicts), o.Ours), mergeHint)
	case err != nil:
		return withCode(ExitFailed, fmt.Errorf("manifest.json not merged: %w", err), mergeHint)
	}
	doc, err := snapshot.BuildManifest(merged.Entries, merged.CreatedAt, merged.UpdatedAt)
	if err != nil {
		return err
	}
	data, err := snapshot.MarshalManifest(doc)
	if err != nil {
		return err
	}
	st := &snapshot.Store{Dir: filepath.Dir(o.Ours)}
	if err := st.WriteAtomic(filepath.Base(o.Ours), data); err != nil {
		return withCode(ExitFailed, err, "check that the folder of "+o.Ours+" is writable")
	}
	fmt.Fprintf(o.IO.ErrOut, "traceforge: merged manifest.json: %d snapshot(s)\n", len(merged.Entries))
	return nil
}
