// Package migrate moves snapshot sets between format versions (DESIGN §8).
//
// A migration is a chain of registered steps, each keyed by the pair of
// versions it connects. A step is a pure function from one in-memory set
// (every file of the folder, as bytes) to the next; Run loads the folder,
// chains the steps, checks the result with the one check pipeline
// (internal/check) and writes it: files staged in .migrate-tmp, renamed in,
// the manifest last (the commit point), then the old files removed.
//
// Adding a format version is one new file whose init calls Register with a
// Step from the previous version; nothing else changes.
package migrate

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/result"
)

// Set is a snapshot set held in memory between steps: its format version and
// every file of the folder that belongs to that version's layout, keyed by
// slash-separated path relative to the folder (for format 0.9.0 only
// "snapshots.json"; for 1.0.0 "manifest.json" and "<provider>/<id>.json").
type Set struct {
	Version string
	Files   map[string][]byte
}

// Rels returns the set's file paths in sorted order.
func (s *Set) Rels() []string {
	rels := make([]string, 0, len(s.Files))
	for r := range s.Files {
		rels = append(rels, r)
	}
	sort.Strings(rels)
	return rels
}

// Env is what a step may use besides its input set.
type Env struct {
	Now     time.Time     // the migration's clock (e.g. manifest updated_at)
	Display string        // how the snapshot folder is named in messages, e.g. ".ai-snapshots"
	Check   check.Options // policy config for the check pipeline
}

// Step migrates a set from one format version to the next.
type Step struct {
	From, To string
	// Describe is one line for help texts, e.g. "single snapshots.json → one file per call".
	Describe string
	// Apply turns the input set into the output set. Problems go in the
	// report (the output is then ignored); an error is reserved for bugs.
	Apply func(in *Set, env Env) (*Set, *result.MigrateStep, error)
}

// Registry holds the known steps. The package-level functions use the
// default registry, which each step file fills from its init function.
type Registry struct {
	mu    sync.RWMutex
	steps map[[2]string]Step
}

// NewRegistry returns an empty registry (tests build their own).
func NewRegistry() *Registry { return &Registry{steps: map[[2]string]Step{}} }

var defaultRegistry = NewRegistry()

// Default returns the registry the steps of this package register in.
func Default() *Registry { return defaultRegistry }

// Register adds a step to the default registry; see Registry.Register.
func Register(s Step) { defaultRegistry.Register(s) }

// Register adds a step. It panics on an incomplete step or a second step for
// the same pair: both are programming errors caught by any test.
func (r *Registry) Register(s Step) {
	if s.From == "" || s.To == "" || s.From == s.To || s.Apply == nil {
		panic(fmt.Sprintf("migrate: incomplete step %q → %q", s.From, s.To))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]string{s.From, s.To}
	if _, dup := r.steps[k]; dup {
		panic(fmt.Sprintf("migrate: step %s → %s registered twice", s.From, s.To))
	}
	r.steps[k] = s
}

// ErrNoPath means no chain of registered steps leads from one version to another.
var ErrNoPath = errors.New("no migration path")

// NoPathError names the requested pair and lists what is supported.
type NoPathError struct {
	From, To  string
	Supported []string
}

func (e *NoPathError) Error() string {
	return fmt.Sprintf("no migration path from %s to %s (supported: %s)", orQ(e.From), orQ(e.To), strings.Join(e.Supported, ", "))
}

// Unwrap makes errors.Is(err, ErrNoPath) true.
func (e *NoPathError) Unwrap() error { return ErrNoPath }

func orQ(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// Path returns the shortest chain of steps from → to (ties broken by version
// order, so the answer never depends on registration order).
func (r *Registry) Path(from, to string) ([]Step, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if from != to {
		next := map[string][]Step{}
		for _, s := range r.steps {
			next[s.From] = append(next[s.From], s)
		}
		for _, ss := range next {
			sort.Slice(ss, func(i, j int) bool { return ss[i].To < ss[j].To })
		}
		prev := map[string]Step{}
		seen := map[string]bool{from: true}
		queue := []string{from}
		for len(queue) > 0 && !seen[to] {
			v := queue[0]
			queue = queue[1:]
			for _, s := range next[v] {
				if !seen[s.To] {
					seen[s.To] = true
					prev[s.To] = s
					queue = append(queue, s.To)
				}
			}
		}
		if seen[to] {
			var chain []Step
			for v := to; v != from; v = prev[v].From {
				chain = append([]Step{prev[v]}, chain...)
			}
			return chain, nil
		}
	}
	return nil, &NoPathError{From: from, To: to, Supported: r.supportedLocked()}
}

// CanReach reports whether a chain of steps leads from → to.
func (r *Registry) CanReach(from, to string) bool {
	_, err := r.Path(from, to)
	return err == nil
}

// Supported lists every reachable pair as "A → B", sorted.
func (r *Registry) Supported() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.supportedLocked()
}

func (r *Registry) supportedLocked() []string {
	adj := map[string][]string{}
	for k := range r.steps {
		adj[k[0]] = append(adj[k[0]], k[1])
	}
	var out []string
	for from := range adj {
		seen := map[string]bool{from: true}
		stack := []string{from}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range adj[v] {
				if !seen[w] {
					seen[w] = true
					out = append(out, from+" → "+w)
					stack = append(stack, w)
				}
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// CanMigrate reports whether the default registry has a path from version
// to the current format (used by verify for its hint).
func CanMigrate(version, current string) bool { return defaultRegistry.CanReach(version, current) }
