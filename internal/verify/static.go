// Package verify checks a snapshot set statically, replays it to an
// application through a loopback server and re-runs it live. Its results
// are internal/render values (VerifyReport, Replayed, LiveResult); render
// writes them as text, JSON, JUnit XML or GitHub workflow annotations.
package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ErrNoSnapshotDir means the snapshot folder does not exist (a usage error).
var ErrNoSnapshotDir = errors.New("snapshot folder not found")

// Shard selects the snapshots of shard K of N (1-based), by id.
type Shard struct{ K, N int }

// ParseShard parses "K/N".
func ParseShard(s string) (*Shard, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return nil, fmt.Errorf("--shard %q must be K/N with 1 ≤ K ≤ N, e.g. 2/4", s)
	}
	return &Shard{k, n}, nil
}

// Keep reports whether rel (<provider>/<id>.json) belongs to the shard.
func (s *Shard) Keep(rel string) bool {
	if s == nil || s.N == 1 {
		return true
	}
	_, id, ok := snapshot.ValidRelPath(rel)
	if !ok {
		return true
	}
	v, _ := strconv.ParseUint(id[:8], 16, 64)
	return int(v%uint64(s.N)) == s.K-1
}

// StaticOptions configure a static verification.
type StaticOptions struct {
	Dir        string // snapshot folder
	Display    string // how the folder is named in reports
	Config     *check.Config
	CanMigrate func(string) bool
	Shard      *Shard
	// Slim keeps only record metadata (check.Options.Slim): for static-only
	// runs, whose memory must not grow with the snapshots' size.
	Slim bool
	// Serve, when set, keeps per snapshot only what the replay server
	// needs (Serve.Compact, with the request's closeness fingerprint): for
	// sets that are served, not re-run live. It is made for Dir
	// (replay.NewEntries(Dir)), and the replay server is given the same
	// Entries (ReplayOptions.Entries). Ignored with Slim.
	Serve *replay.Entries
}

// Static runs every static check over the set and returns the report and
// the checked set (for replay).
func Static(o StaticOptions) (*result.VerifyReport, *check.SetResult, error) {
	fi, err := os.Lstat(o.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoSnapshotDir, o.Dir)
	}
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%w: %s is not a folder", ErrNoSnapshotDir, o.Dir)
	}
	display := o.Display
	if display == "" {
		display = filepath.ToSlash(o.Dir)
	}
	var keep check.Filter
	if o.Shard != nil {
		keep = o.Shard.Keep
	}
	opts := check.Options{Config: o.Config, CanMigrate: o.CanMigrate, Slim: o.Slim}
	if o.Serve != nil {
		opts.Trim = func(s *check.Snapshot) *check.Snapshot {
			return o.Serve.Compact(s, features(s.Record.Request))
		}
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: o.Dir}, opts, keep)
	if err != nil {
		return nil, nil, err
	}
	rep := &result.VerifyReport{Dir: display, Mode: "static", Findings: set.Findings}
	for _, rel := range set.Rels {
		rep.Checked = append(rep.Checked, display+"/"+rel)
	}
	for _, s := range set.Snapshots {
		if s.Exception != nil {
			rep.Exception = append(rep.Exception, fmt.Sprintf("%s/%s: nondeterministic by policy (model %q matches %q; relaxes %s)", display, s.Rel, s.Record.Request["model"], s.Exception.Model, strings.Join(s.Exception.Relax, ", ")))
		}
	}
	return rep, set, nil
}
