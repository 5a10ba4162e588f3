package setdiff

import (
	"sort"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// Status is what happened to one snapshot file.
type Status string

// Statuses, in report order.
const (
	Changed    Status = "changed"
	Added      Status = "added"
	Removed    Status = "removed"
	Unreadable Status = "unreadable" // in the work tree, but not a readable snapshot
)

// Item is one snapshot file that differs between the two sides.
type Item struct {
	Status   Status
	File     string // <provider>/<id>.json
	Old, New *snapshot.Record
	// Change classifies the answer change (Changed only).
	Change change.Result
	// Failing lists the classes of Change that fail_on lists.
	Failing []change.Class
	// Source is set when the call moved in the application's code.
	Source *change.StringChange
	// Words is the word-level diff of the answer text (Changed with a
	// content change).
	Words []change.Span
	// Notes are other differences: re-recorded time, request fields outside
	// the key, a snapshot that fails its checks.
	Notes []string
	// Problem is why an Unreadable file cannot be compared.
	Problem string
	// Replaces is, for an added snapshot, the removed one made from the same
	// source line: most likely the same call with a changed request.
	Replaces *snapshot.Record
}

// Record returns the side that exists (the new one when both do).
func (it *Item) Record() *snapshot.Record {
	if it.New != nil {
		return it.New
	}
	return it.Old
}

// Report is the comparison of two sets.
type Report struct {
	From, To  string // the sides' labels
	Dir       string // the snapshot folder as shown
	FailOn    []change.Class
	Items     []Item // sorted by status order, then file
	Unchanged int
}

// Count returns how many items have status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, it := range r.Items {
		if it.Status == s {
			n++
		}
	}
	return n
}

// Failing returns the items --check fails on: changes in a fail_on class and
// work-tree files that cannot be read.
func (r *Report) Failing() []Item {
	var out []Item
	for _, it := range r.Items {
		if len(it.Failing) > 0 || it.Status == Unreadable {
			out = append(out, it)
		}
	}
	return out
}

var statusOrder = map[Status]int{Changed: 0, Added: 1, Removed: 2, Unreadable: 3}

// Compare reports how the set changed from old to new. failOn marks the
// classes that fail (see Report.Failing).
func Compare(old, new *Set, dir string, failOn []change.Class) *Report {
	r := &Report{From: old.Label, To: new.Label, Dir: dir, FailOn: failOn}
	rels := map[string]bool{}
	for _, m := range []map[string]*check.Snapshot{old.Snapshots, new.Snapshots} {
		for rel := range m {
			rels[rel] = true
		}
	}
	for rel := range new.Broken {
		rels[rel] = true
	}
	for rel := range rels {
		o, n := old.Snapshots[rel], new.Snapshots[rel]
		if reason, broken := new.Broken[rel]; broken {
			r.Items = append(r.Items, Item{Status: Unreadable, File: rel, Old: recordOf(o), Problem: reason})
			continue
		}
		switch {
		case o == nil && n != nil:
			it := Item{Status: Added, File: rel, New: n.Record}
			if reason, ok := old.Broken[rel]; ok {
				it.Notes = append(it.Notes, "unreadable at "+old.Label+": "+reason)
			}
			r.Items = append(r.Items, it)
		case o != nil && n == nil:
			r.Items = append(r.Items, Item{Status: Removed, File: rel, Old: o.Record})
		case o.FileHash == n.FileHash:
			r.Unchanged++
		default:
			r.Items = append(r.Items, compareOne(rel, o, n, failOn))
		}
	}
	pairReplacements(r.Items)
	sort.Slice(r.Items, func(i, j int) bool {
		a, b := r.Items[i], r.Items[j]
		if a.Status != b.Status {
			return statusOrder[a.Status] < statusOrder[b.Status]
		}
		return a.File < b.File
	})
	return r
}

func recordOf(s *check.Snapshot) *snapshot.Record {
	if s == nil {
		return nil
	}
	return s.Record
}

func compareOne(rel string, o, n *check.Snapshot, failOn []change.Class) Item {
	it := Item{Status: Changed, File: rel, Old: o.Record, New: n.Record}
	it.Change = change.Classify(o.Record.Response, n.Record.Response)
	it.Failing = it.Change.Failing(failOn)
	if c := it.Change.Content; c != nil {
		it.Words = change.Words(c.From, c.To)
	}
	if os, ns := o.Record.Source.Display(), n.Record.Source.Display(); os != ns {
		it.Source = &change.StringChange{From: os, To: ns}
	}
	if o.Record.Timestamp != n.Record.Timestamp {
		it.Notes = append(it.Notes, "re-recorded: "+o.Record.Timestamp+" → "+n.Record.Timestamp)
	}
	if !sameJSON(o.Record.Request, n.Record.Request) {
		it.Notes = append(it.Notes, "request: fields outside the request key changed (stream, stream_options or tool-call ids)")
	}
	if o.Record.Response.Stream != n.Record.Response.Stream {
		it.Notes = append(it.Notes, "stream: the call is streamed on one side only")
	}
	if n.Errors > 0 {
		it.Notes = append(it.Notes, "fails its checks in the work tree: run traceforge verify")
	}
	return it
}

func sameJSON(a, b any) bool {
	ca, err1 := snapshot.Canonical(a)
	cb, err2 := snapshot.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

// pairReplacements links an added snapshot to the removed one when they are
// the only added and removed snapshots of one provider and source: a
// changed request gives a new id, so the same call shows as removed + added.
func pairReplacements(items []Item) {
	type key struct {
		provider string
		src      source.Source
	}
	added, removed := map[key][]int{}, map[key][]int{}
	for i, it := range items {
		switch it.Status {
		case Added:
			k := key{it.New.Provider, it.New.Source}
			added[k] = append(added[k], i)
		case Removed:
			k := key{it.Old.Provider, it.Old.Source}
			removed[k] = append(removed[k], i)
		}
	}
	for k, as := range added {
		rs := removed[k]
		if len(as) != 1 || len(rs) != 1 {
			continue
		}
		a, r := &items[as[0]], &items[rs[0]]
		a.Replaces = r.Old
		a.Notes = append(a.Notes, "replaces "+r.File+" (same source; the request changed)")
		r.Notes = append(r.Notes, "replaced by "+a.File+" (same source; the request changed)")
	}
}
