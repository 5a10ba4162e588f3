// Package ledger reads a snapshot set as a ledger of calls: a lean read of
// only the fields accounting and conversation views need (no schema, no
// hashes: `traceforge verify` does that), token usage per wire format,
// stats grouped by provider, model, source or endpoint with cost from the
// config's prices, conversation trees from lineage, and the run totals the
// record and verify --live summaries end with.
package ledger

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/valyala/fastjson"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// Entry is what the ledger keeps of one snapshot file: small and fixed in
// size whatever the file holds (an excerpt, never the whole answer).
type Entry struct {
	Rel           string // <provider>/<id>.json
	Provider      string
	ID            string
	Timestamp     string
	Source        source.Source
	Endpoint      string // the record's endpoint, or derived as the key derives it (format 1.0.0)
	RequestModel  string
	ResponseModel string
	FinishReason  string
	TokensUsed    int64
	LatencyMS     int64
	Stream        bool
	Usage         Usage
	ParentID      string
	Turn          int

	// Read only with ReadOptions.Conversation.
	Excerpt     string   // the start of response.content, one line
	ToolNames   []string // tools the answer called, in order
	ToolResults bool     // the request returns tool results after its last assistant turn
}

// Model is the model the stats group and price by: the served model
// (response.model), else the requested one.
func (e *Entry) Model() string {
	if e.ResponseModel != "" {
		return e.ResponseModel
	}
	return e.RequestModel
}

// ReadOptions says what to read beyond the accounting fields.
type ReadOptions struct {
	Conversation bool // excerpt, tool names, tool results (snapshot tree)
}

// Problem is a file the lean read could not use.
type Problem struct {
	Rel string
	Err error
}

// ErrUnreadable wraps every per-file problem of the lean read.
var ErrUnreadable = errors.New("not a readable snapshot")

// ExcerptLen is the most characters of an answer an excerpt keeps.
const ExcerptLen = 60

// Each reads every snapshot file of st concurrently and hands each entry to
// fn, one at a time from one goroutine, in no particular order (fn may keep
// the entry). Files that cannot be read come back as problems, in file
// order; the set itself not being readable is the error. Memory stays
// bounded by what fn keeps.
func Each(st *snapshot.Store, opts ReadOptions, fn func(*Entry)) ([]Problem, error) {
	scanned, err := st.Scan()
	if err != nil {
		return nil, err
	}
	var files []snapshot.Entry
	for _, e := range scanned {
		if e.Kind == snapshot.EntrySnapshot {
			files = append(files, e)
		}
	}
	type result struct {
		i   int
		e   *Entry
		err error
	}
	results := make(chan result, 256)
	next := make(chan int, 64)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			var parser fastjson.Parser
			in := interner{}
			for i := range next {
				f := files[i]
				if f.Symlink {
					results <- result{i: i, err: fmt.Errorf("%w: %w", ErrUnreadable, snapshot.ErrSymlink)}
					continue
				}
				data, err := st.ReadRelInto(f.Rel, snapshot.MaxSnapshotFileSize, buf)
				if err != nil {
					results <- result{i: i, err: fmt.Errorf("%w: %w", ErrUnreadable, err)}
					continue
				}
				buf = data // entries never alias the buffer: every kept string is copied out
				e := &Entry{}
				if err := readEntry(&parser, data, f.Provider, opts, e); err != nil {
					results <- result{i: i, err: err}
					continue
				}
				if e.ID != f.ID {
					results <- result{i: i, err: fmt.Errorf("%w: its id %q is not its file name", ErrUnreadable, e.ID)}
					continue
				}
				in.entry(e)
				e.Rel, e.ID, e.Provider = f.Rel, f.ID, f.Provider // share the scan's strings
				results <- result{i: i, e: e}
			}
		}()
	}
	go func() {
		for i := range files {
			next <- i
		}
		close(next)
		wg.Wait()
		close(results)
	}()
	errs := map[int]error{}
	for r := range results {
		if r.err != nil {
			errs[r.i] = r.err
			continue
		}
		fn(r.e)
	}
	var problems []Problem
	for i := range files {
		if err := errs[i]; err != nil {
			problems = append(problems, Problem{Rel: files[i].Rel, Err: err})
		}
	}
	return problems, nil
}

// Load is Each keeping every entry, sorted by file.
func Load(st *snapshot.Store, opts ReadOptions) ([]Entry, []Problem, error) {
	var entries []Entry
	problems, err := Each(st, opts, func(e *Entry) { entries = append(entries, *e) })
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Rel < entries[j].Rel })
	return entries, problems, nil
}

// ReadEntry reads the fields of one snapshot file into e without building
// the whole document: the file's one record is walked key by key and only
// the members the ledger uses are parsed.
func ReadEntry(data []byte, provider string, opts ReadOptions, e *Entry) error {
	p := parsers.Get()
	defer parsers.Put(p)
	return readEntry(p, data, provider, opts, e)
}

// parsers reuse fastjson's parse trees between files.
var parsers fastjson.ParserPool

// readEntry is ReadEntry with the caller's parser: the file is parsed once
// (one pass over its bytes, values then looked up in the tree), and
// everything kept is copied out of the tree, which p reuses.
func readEntry(p *fastjson.Parser, data []byte, provider string, opts ReadOptions, e *Entry) error {
	*e = Entry{Provider: provider}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrUnreadable, fmt.Sprintf(format, args...))
	}
	doc, err := p.ParseBytes(data)
	if err != nil {
		// fastjson's own message quotes the unparsed tail: name the fix instead.
		return bad("not valid JSON (damaged or truncated; traceforge verify shows where)")
	}
	version, ok := stringOf(doc.Get("version"))
	if !ok {
		return bad("no format version")
	}
	if !strings.HasPrefix(version, "1.") {
		return bad("format version %q is not 1.x", version)
	}
	rec, ok := objectOf(doc.Get("snapshots", "0"))
	if !ok {
		return bad("no record in /snapshots/0")
	}
	var request, response *fastjson.Value
	var hasEndpoint bool
	rec.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		switch string(key) {
		case "id":
			e.ID, err = str(v)
		case "timestamp":
			e.Timestamp, err = str(v)
		case "endpoint":
			e.Endpoint, err = str(v)
			hasEndpoint = true
		case "source":
			err = readSource(v, &e.Source)
		case "request":
			request = v
		case "response":
			response = v
		case "lineage":
			if v.Type() != fastjson.TypeObject {
				err = errors.New("lineage is not an object")
				return
			}
			e.ParentID, _ = stringOf(v.Get("parent_id"))
			e.Turn = intOf(v.Get("turn"))
		}
	})
	if err != nil {
		return bad("%v", err)
	}
	if !snapshot.ValidID(e.ID) {
		return bad("no valid /snapshots/0/id")
	}
	if request == nil || response == nil {
		return bad("no request or response")
	}
	reqObj, err := request.Object()
	if err != nil {
		return bad("request: %v", err)
	}
	var shape map[string]any
	reqObj.Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "model":
			e.RequestModel, _ = stringOf(v)
		case "messages", "prompt":
			if shape == nil {
				shape = map[string]any{}
			}
			shape[string(key)] = true
			if opts.Conversation && string(key) == "messages" && v.Type() == fastjson.TypeArray {
				e.ToolResults = returnsToolResults(v)
			}
		case "input", "contents":
			if opts.Conversation && v.Type() == fastjson.TypeArray {
				e.ToolResults = returnsToolResults(v)
			}
		}
	})
	if !hasEndpoint {
		if f := registry.ForRecord(provider, shape); f != nil {
			e.Endpoint = string(f.Endpoint())
		}
	}
	respObj, err := response.Object()
	if err != nil {
		return bad("response: %v", err)
	}
	var usage, body *fastjson.Object
	respObj.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		switch string(key) {
		case "tokens_used":
			e.TokensUsed, err = int64Of(v)
		case "latency_ms":
			e.LatencyMS, err = int64Of(v)
		case "finish_reason":
			e.FinishReason, err = str(v)
		case "model":
			e.ResponseModel, err = str(v)
		case "stream":
			e.Stream = v.Type() == fastjson.TypeTrue
		case "usage":
			usage, _ = objectOf(v)
		case "body":
			body, _ = objectOf(v)
		case "content":
			if opts.Conversation && v.Type() == fastjson.TypeString {
				e.Excerpt = excerpt(v)
			}
		case "tool_calls":
			if opts.Conversation && v.Type() == fastjson.TypeArray {
				e.ToolNames = toolNames(v)
			}
		}
		if err != nil {
			err = fmt.Errorf("%s: %v", key, err)
		}
	})
	if err != nil {
		return bad("response: %v", err)
	}
	e.Usage = ExtractUsage(provider, e.Endpoint, usageCounts(usage, body), e.TokensUsed)
	// Everything shown is redacted here, once, so that output can stream.
	for _, f := range []*string{&e.Source.File, &e.Source.Function, &e.Endpoint, &e.RequestModel, &e.ResponseModel, &e.FinishReason} {
		*f = check.Redact(*f)
	}
	for i := range e.ToolNames {
		e.ToolNames[i] = check.Redact(e.ToolNames[i])
	}
	return nil
}

// interner keeps one copy of strings that repeat across a set (models,
// sources, endpoints, finish reasons), so 100k entries hold a few distinct
// strings instead of 100k copies.
type interner map[string]string

func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	if len(in) < 1<<16 {
		in[s] = s
	}
	return s
}

func (in interner) entry(e *Entry) {
	for _, f := range []*string{&e.Source.File, &e.Source.Function, &e.Endpoint, &e.RequestModel, &e.ResponseModel, &e.FinishReason} {
		*f = in.of(*f)
	}
	for i := range e.ToolNames {
		e.ToolNames[i] = in.of(e.ToolNames[i])
	}
}

// str is a string member's value (copied out of the parse tree).
func str(v *fastjson.Value) (string, error) {
	b, err := v.StringBytes()
	if err != nil {
		return "", fmt.Errorf("want a string, got %s", v.Type())
	}
	return string(b), nil
}

// stringOf is v's string value; false when v is missing or not a string.
func stringOf(v *fastjson.Value) (string, bool) {
	if v == nil || v.Type() != fastjson.TypeString {
		return "", false
	}
	s, _ := str(v)
	return s, true
}

// objectOf is v's object; false when v is missing or not an object.
func objectOf(v *fastjson.Value) (*fastjson.Object, bool) {
	if v == nil || v.Type() != fastjson.TypeObject {
		return nil, false
	}
	o, _ := v.Object()
	return o, true
}

// int64Of is an integer member's value, written as an integer.
func int64Of(v *fastjson.Value) (int64, error) {
	if v.Type() != fastjson.TypeNumber {
		return 0, fmt.Errorf("want an integer, got %s", v.Type())
	}
	return strconv.ParseInt(string(v.MarshalTo(nil)), 10, 64)
}

// intOf is v's integer value, 0 when v is missing or not an integer.
func intOf(v *fastjson.Value) int {
	if v == nil {
		return 0
	}
	n, _ := int64Of(v)
	return int(n)
}

func readSource(v *fastjson.Value, s *source.Source) error {
	if v.Type() != fastjson.TypeObject {
		return errors.New("source is not an object")
	}
	s.File, _ = stringOf(v.Get("file"))
	s.Line = intOf(v.Get("line"))
	s.Function, _ = stringOf(v.Get("function"))
	return nil
}

// usageCounts gathers the token counters of a call: the stored usage, else
// the body's (OpenAI/Anthropic "usage", Gemini "usageMetadata", Ollama's
// top-level prompt_eval_count and eval_count).
func usageCounts(usage, body *fastjson.Object) map[string]int64 {
	counts := map[string]int64{}
	add := func(obj *fastjson.Object) {
		obj.Visit(func(key []byte, v *fastjson.Value) {
			if v.Type() == fastjson.TypeNumber {
				if n, err := int64Of(v); err == nil {
					counts[string(key)] = n
				}
			}
		})
	}
	if usage != nil {
		add(usage)
		return counts
	}
	if body == nil {
		return counts
	}
	for _, k := range []string{"usage", "usageMetadata"} {
		if o, ok := objectOf(body.Get(k)); ok {
			add(o)
			return counts
		}
	}
	for _, k := range []string{"prompt_eval_count", "eval_count"} {
		if v := body.Get(k); v != nil {
			if n, err := int64Of(v); err == nil {
				counts[k] = n
			}
		}
	}
	return counts
}

// excerpt is the start of a string value, on one line. Secrets are
// redacted before the cut (a cut key would no longer match a rule).
func excerpt(v *fastjson.Value) string {
	s, ok := stringOf(v)
	if !ok {
		return ""
	}
	return Shorten(check.Redact(s), ExcerptLen)
}

// Shorten puts s on one line (whitespace runs become one space, none at
// either end) and keeps at most n characters, ending with "…" when it cut.
// It reads no further into s than it keeps.
func Shorten(s string, n int) string {
	var b strings.Builder
	kept, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = kept > 0
			continue
		}
		if space {
			if kept+1 >= n {
				return strings.TrimRight(b.String(), " ") + "…"
			}
			b.WriteByte(' ')
			kept++
			space = false
		}
		if kept >= n {
			return cut(b.String(), n-1) + "…"
		}
		b.WriteRune(r)
		kept++
	}
	return b.String()
}

// cut keeps the first n characters of s, without trailing spaces.
func cut(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return strings.TrimRight(s[:j], " ")
		}
		i++
	}
	return s
}
