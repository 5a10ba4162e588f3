package check

import (
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// TestChainFindings: a chained Responses record whose parent is missing is
// a note; a parent whose recorded id differs from previous_response_id is a
// note; a turn that is not the parent's + 1 is an error.
func TestChainFindings(t *testing.T) {
	snap := func(rel, id, respID, chainedFrom, parent string, turn int) *Snapshot {
		return &Snapshot{Rel: rel, ResponseID: respID, ChainedFrom: chainedFrom,
			Record: &snapshot.Record{ID: id, ParentID: parent, Turn: turn}}
	}
	root := snap("openai/aaaaaaaaaaaa.json", "aaaaaaaaaaaa", "resp_1", "", "", 0)
	cases := []struct {
		name  string
		child *Snapshot
		sev   finding.Severity
		want  string
	}{
		{"consistent", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_1", "aaaaaaaaaaaa", 2), finding.Note, ""},
		{"missing parent", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_1", "cccccccccccc", 2), finding.Note, "is not in the set"},
		{"other id", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_9", "aaaaaaaaaaaa", 2), finding.Note, "is not the id resp_1"},
		{"wrong turn", snap("openai/bbbbbbbbbbbb.json", "bbbbbbbbbbbb", "resp_2", "resp_1", "aaaaaaaaaaaa", 3), finding.Error, "lineage turn is 3"},
	}
	for _, c := range cases {
		fs := chainFindings([]*Snapshot{root, c.child})
		if c.want == "" {
			if len(fs) != 0 {
				t.Errorf("%s: %v", c.name, fs)
			}
			continue
		}
		if len(fs) != 1 || fs[0].Severity != c.sev || !strings.Contains(fs[0].Message, c.want) || fs[0].File != c.child.Rel {
			t.Errorf("%s: %v", c.name, fs)
		}
	}
}
