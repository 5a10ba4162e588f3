package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/traceforge/traceforge/internal/result"
)

// Node is one call in a conversation tree, or a placeholder for a parent
// that is not in the set (Missing).
type Node struct {
	ID       string
	Entry    *Entry // nil when Missing
	Missing  bool   // the parent named by the children's lineage is not in the set
	Cycle    bool   // its lineage leads back to itself (an edited set); shown as a root
	Parent   *Node
	Children []*Node
}

// Forest is every conversation of a set: one tree per root.
type Forest struct {
	Roots []*Node
	byID  map[string]*Node
}

// BuildForest links entries by lineage.parent_id. Roots are calls without
// lineage, placeholders for missing parents, and (in an edited set) one
// call of each lineage cycle. Roots and children are ordered by timestamp,
// then id, so the output never depends on file order.
func BuildForest(entries []Entry) *Forest {
	ptrs := make([]*Entry, len(entries))
	for i := range entries {
		ptrs[i] = &entries[i]
	}
	return BuildForestOf(ptrs)
}

// BuildForestOf is BuildForest over entries kept by pointer (as Each hands
// them out), so a large set is never copied into one growing slice.
func BuildForestOf(entries []*Entry) *Forest {
	f := &Forest{byID: make(map[string]*Node, len(entries))}
	nodes := make([]Node, len(entries)) // one allocation for every call
	order := make([]*Node, len(entries))
	for i, e := range entries {
		nodes[i] = Node{ID: e.ID, Entry: e}
		order[i] = &nodes[i]
	}
	// By id, then file: two files with one id (a collision verify reports)
	// are both shown; children hang under the first.
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Entry.Rel < b.Entry.Rel
	})
	for _, n := range order {
		if f.byID[n.ID] == nil {
			f.byID[n.ID] = n
		}
	}
	for _, n := range order {
		pid := n.Entry.ParentID
		if pid == "" {
			f.Roots = append(f.Roots, n)
			continue
		}
		p := f.byID[pid]
		if p == nil {
			p = &Node{ID: pid, Missing: true}
			f.byID[pid] = p
			f.Roots = append(f.Roots, p)
		}
		n.Parent = p
		p.Children = append(p.Children, n)
	}
	// Calls not reachable from a root sit on a lineage cycle: cut each cycle
	// at its smallest id.
	seen := make(map[*Node]bool, len(f.byID))
	mark := func(r *Node) {
		stack := []*Node{r}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[n] {
				continue
			}
			seen[n] = true
			stack = append(stack, n.Children...)
		}
	}
	for _, r := range f.Roots {
		mark(r)
	}
	for _, n := range order {
		if seen[n] {
			continue
		}
		// Walk up to the cycle this call hangs from; cut it at its smallest id.
		on := map[*Node]bool{}
		for !on[n] {
			on[n] = true
			n = n.Parent
		}
		start := n
		for x := start.Parent; x != start; x = x.Parent {
			if x.ID < n.ID {
				n = x
			}
		}
		p := n.Parent
		for i, c := range p.Children {
			if c == n {
				p.Children = append(p.Children[:i:i], p.Children[i+1:]...)
				break
			}
		}
		n.Parent, n.Cycle = nil, true
		f.Roots = append(f.Roots, n)
		mark(n)
	}
	for _, n := range f.byID {
		sortNodes(n.Children)
	}
	sortNodes(f.Roots)
	return f
}

// when is the timestamp a node sorts by (a missing parent: its first child's).
func (n *Node) when() string {
	if n.Entry != nil {
		return n.Entry.Timestamp
	}
	w := ""
	for _, c := range n.Children {
		if t := c.when(); w == "" || t < w {
			w = t
		}
	}
	return w
}

func sortNodes(ns []*Node) {
	sort.SliceStable(ns, func(i, j int) bool {
		a, b := ns[i].when(), ns[j].when()
		if a != b {
			return a < b
		}
		return ns[i].ID < ns[j].ID
	})
}

// Lookup returns the node of id (a call or a missing parent).
func (f *Forest) Lookup(id string) *Node { return f.byID[id] }

// Path is the chain from n's root down to n.
func (n *Node) Path() []*Node {
	var p []*Node
	for x := n; x != nil; x = x.Parent {
		p = append(p, x)
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Turn is the node's turn: lineage.turn, 1 without lineage, the child's
// turn - 1 for a missing parent (0 when unknown).
func (n *Node) Turn() int {
	if n.Entry != nil {
		if n.Entry.Turn > 0 {
			return n.Entry.Turn
		}
		return 1
	}
	for _, c := range n.Children {
		if c.Entry != nil && c.Entry.Turn > 1 {
			return c.Entry.Turn - 1
		}
	}
	return 0
}

// preorder lists the subtree of n depth first, children in order.
func preorder(n *Node) []*Node {
	var out []*Node
	stack := []*Node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, x)
		for i := len(x.Children) - 1; i >= 0; i-- {
			stack = append(stack, x.Children[i])
		}
	}
	return out
}

// TreeSummary counts what a tree view shows.
type TreeSummary struct {
	Conversations  int `json:"conversations"`
	Calls          int `json:"calls"`
	Forks          int `json:"forks"`
	MissingParents int `json:"missing_parents"`
	ToolIterations int `json:"tool_iterations"` // answers that called tools
	Cycles         int `json:"lineage_cycles"`
}

func (s *TreeSummary) count(n *Node) {
	switch {
	case n.Missing:
		s.MissingParents++
	default:
		s.Calls++
		if len(n.Entry.ToolNames) > 0 {
			s.ToolIterations++
		}
	}
	if len(n.Children) > 1 {
		s.Forks++
	}
	if n.Cycle {
		s.Cycles++
	}
}

// View is what snapshot tree prints: every conversation, or (Selected set)
// the path from a call's root to it and its subtree.
type View struct {
	Forest   *Forest
	Selected *Node
}

// JSON shapes of the tree view.
type (
	jsonNode struct {
		ID           string   `json:"id"`
		Turn         int      `json:"turn"`
		ParentID     string   `json:"parent_id,omitempty"`
		Missing      bool     `json:"missing,omitempty"`
		Cycle        bool     `json:"lineage_cycle,omitempty"`
		File         string   `json:"file,omitempty"`
		Provider     string   `json:"provider,omitempty"`
		Model        string   `json:"model,omitempty"`
		Source       string   `json:"source,omitempty"`
		FinishReason string   `json:"finish_reason,omitempty"`
		Tokens       int64    `json:"tokens"`
		ToolCalls    []string `json:"tool_calls,omitempty"`
		ToolResults  bool     `json:"tool_results,omitempty"`
		Fork         bool     `json:"fork,omitempty"`
		Excerpt      string   `json:"excerpt,omitempty"`
		Children     []string `json:"children,omitempty"`
	}
	jsonConversation struct {
		Root  string     `json:"root"`
		Nodes []jsonNode `json:"nodes"`
	}
)

func toJSON(n *Node, keepChildren bool) jsonNode {
	j := jsonNode{ID: n.ID, Turn: n.Turn(), Missing: n.Missing, Cycle: n.Cycle, Fork: len(n.Children) > 1}
	if n.Parent != nil {
		j.ParentID = n.Parent.ID
	}
	if e := n.Entry; e != nil {
		j.File, j.Provider, j.Model, j.Source = e.Rel, e.Provider, e.Model(), e.Source.Display()
		j.FinishReason, j.Tokens, j.ToolCalls, j.ToolResults, j.Excerpt = e.FinishReason, e.Usage.Total, e.ToolNames, e.ToolResults, e.Excerpt
	}
	if keepChildren {
		for _, c := range n.Children {
			j.Children = append(j.Children, c.ID)
		}
	}
	return j
}

// WriteJSON writes the view: conversations as flat node lists in display
// order (parent before children), each node naming its parent and
// children. It streams: one conversation is in memory at a time.
func (v *View) WriteJSON(w io.Writer) error {
	ew := &errWriter{w: w}
	var sum TreeSummary
	ew.printf("{\n")
	if s := v.Selected; s != nil {
		path := s.Path()
		ids := make([]string, len(path))
		for i, p := range path {
			ids[i] = p.ID
		}
		ew.field("selected", s.ID, "  ")
		ew.field("path", ids, "  ")
	}
	ew.printf("  \"conversations\": [")
	n := 0
	conversation := func(root string, nodes []jsonNode) {
		if n > 0 {
			ew.printf(",")
		}
		n++
		ew.printf("\n    ")
		ew.json(jsonConversation{Root: root, Nodes: nodes}, "    ")
	}
	if s := v.Selected; s != nil {
		path := s.Path()
		var nodes []jsonNode
		for _, p := range path[:len(path)-1] {
			nodes = append(nodes, toJSON(p, false))
			sum.count(p)
		}
		for _, x := range preorder(s) {
			nodes = append(nodes, toJSON(x, true))
			sum.count(x)
		}
		conversation(path[0].ID, nodes)
		sum.Conversations = 1
	} else {
		for _, r := range v.Forest.Roots {
			var nodes []jsonNode
			for _, x := range preorder(r) {
				nodes = append(nodes, toJSON(x, true))
				sum.count(x)
			}
			conversation(r.ID, nodes)
		}
		sum.Conversations = len(v.Forest.Roots)
	}
	if n > 0 {
		ew.printf("\n  ")
	}
	ew.printf("],\n")
	ew.printf("  \"summary\": ")
	ew.json(sum, "  ")
	ew.printf("\n}\n")
	return ew.err
}

// errWriter writes until the first error and keeps it.
type errWriter struct {
	w   io.Writer
	err error
	buf bytes.Buffer
	enc map[string]*json.Encoder // by prefix: an Encoder reuses its buffers
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// json writes v indented as a member of an object indented by prefix.
func (e *errWriter) json(v any, prefix string) {
	if e.err != nil {
		return
	}
	enc := e.enc[prefix]
	if enc == nil {
		if e.enc == nil {
			e.enc = map[string]*json.Encoder{}
		}
		enc = json.NewEncoder(&e.buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent(prefix, "  ")
		e.enc[prefix] = enc
	}
	e.buf.Reset()
	if e.err = enc.Encode(v); e.err == nil {
		_, e.err = e.w.Write(bytes.TrimRight(e.buf.Bytes(), "\n"))
	}
}

func (e *errWriter) field(name string, v any, prefix string) {
	e.printf("%s%q: ", prefix, name)
	e.json(v, prefix)
	e.printf(",\n")
}

// nodeLine is one call on one line: turn, id, provider/model, finish
// reason, tokens, source, tool markers, fork, excerpt.
func nodeLine(n *Node) string {
	turn := "t?"
	if t := n.Turn(); t > 0 {
		turn = fmt.Sprintf("t%d", t)
	}
	if n.Missing {
		return fmt.Sprintf("%s %s  (missing: a parent not in the set; its children were recorded without it)", turn, n.ID)
	}
	e := n.Entry
	parts := []string{turn + " " + n.ID, e.Provider + "/" + e.Model(), e.FinishReason, result.Thousands(e.Usage.Total) + " tok", e.Source.Display()}
	if e.ToolResults {
		parts = append(parts, "returns tool results")
	}
	if len(e.ToolNames) > 0 {
		parts = append(parts, "calls tools: "+strings.Join(e.ToolNames, ", "))
	}
	if len(n.Children) > 1 {
		parts = append(parts, fmt.Sprintf("fork: %d branches", len(n.Children)))
	}
	if n.Cycle {
		parts = append(parts, "(lineage cycle: run traceforge verify)")
	}
	if e.Excerpt != "" {
		parts = append(parts, fmt.Sprintf("%q", e.Excerpt))
	}
	return strings.Join(parts, "  ")
}

// writeSubtree prints n's subtree: a chain of single children continues on
// the same indent (a timeline); a fork opens one branch per child.
func writeSubtree(w io.Writer, n *Node, lead, rest string) {
	fmt.Fprintf(w, "%s%s\n", lead, nodeLine(n))
	for len(n.Children) == 1 {
		n = n.Children[0]
		fmt.Fprintf(w, "%s%s\n", rest, nodeLine(n))
	}
	for i, c := range n.Children {
		if i == len(n.Children)-1 {
			writeSubtree(w, c, rest+"└─ ", rest+"   ")
		} else {
			writeSubtree(w, c, rest+"├─ ", rest+"│  ")
		}
	}
}

// WriteText draws the view: one block per conversation, then a summary.
func (v *View) WriteText(w io.Writer) error {
	var sum TreeSummary
	if s := v.Selected; s != nil {
		path := s.Path()
		fmt.Fprintf(w, "path from root %s to %s (turn %d):\n", path[0].ID, s.ID, s.Turn())
		for _, p := range path[:len(path)-1] {
			fmt.Fprintf(w, "  %s\n", nodeLine(p))
			sum.count(p)
		}
		writeSubtree(w, s, "▶ ", "  ")
		for _, n := range preorder(s) {
			sum.count(n)
		}
		sum.Conversations = 1
	} else {
		for i, r := range v.Forest.Roots {
			if i > 0 {
				fmt.Fprintln(w)
			}
			writeSubtree(w, r, "", "")
			for _, n := range preorder(r) {
				sum.count(n)
			}
		}
		sum.Conversations = len(v.Forest.Roots)
	}
	if sum.Conversations > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d conversation%s, %d call%s, %d tool iteration%s, %d fork%s, %d missing parent%s",
		sum.Conversations, plural(sum.Conversations), sum.Calls, plural(sum.Calls), sum.ToolIterations, plural(sum.ToolIterations),
		sum.Forks, plural(sum.Forks), sum.MissingParents, plural(sum.MissingParents))
	if sum.Cycles > 0 {
		fmt.Fprintf(w, ", %d lineage cycle%s (run traceforge verify)", sum.Cycles, plural(sum.Cycles))
	}
	_, err := fmt.Fprintln(w)
	return err
}
