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

	"github.com/buger/jsonparser"

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
				if err := ReadEntry(data, f.Provider, opts, e); err != nil {
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
	*e = Entry{Provider: provider}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrUnreadable, fmt.Sprintf(format, args...))
	}
	version, err := jsonparser.GetString(data, "version")
	if err != nil {
		return bad("no format version")
	}
	if !strings.HasPrefix(version, "1.") {
		return bad("format version %q is not 1.x", version)
	}
	rec, vt, _, err := jsonparser.Get(data, "snapshots", "[0]")
	if err != nil || vt != jsonparser.Object {
		return bad("no record in /snapshots/0")
	}
	var request, response []byte
	var hasEndpoint bool
	err = jsonparser.ObjectEach(rec, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
		var err error
		switch string(key) {
		case "id":
			e.ID, err = str(value, vt)
		case "timestamp":
			e.Timestamp, err = str(value, vt)
		case "endpoint":
			e.Endpoint, err = str(value, vt)
			hasEndpoint = true
		case "source":
			err = readSource(value, vt, &e.Source)
		case "request":
			request = value
		case "response":
			response = value
		case "lineage":
			if vt != jsonparser.Object {
				return errors.New("lineage is not an object")
			}
			e.ParentID, _ = jsonparser.GetString(value, "parent_id")
			t, _ := jsonparser.GetInt(value, "turn")
			e.Turn = int(t)
		}
		return err
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
	var shape map[string]any
	err = jsonparser.ObjectEach(request, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
		switch string(key) {
		case "model":
			e.RequestModel, _ = str(value, vt)
		case "messages", "prompt":
			if shape == nil {
				shape = map[string]any{}
			}
			shape[string(key)] = true
			if opts.Conversation && string(key) == "messages" && vt == jsonparser.Array {
				e.ToolResults = returnsToolResults(value)
			}
		case "input", "contents":
			if opts.Conversation && vt == jsonparser.Array {
				e.ToolResults = returnsToolResults(value)
			}
		}
		return nil
	})
	if err != nil {
		return bad("request: %v", err)
	}
	if !hasEndpoint {
		if f := registry.ForRecord(provider, shape); f != nil {
			e.Endpoint = string(f.Endpoint())
		}
	}
	var usage, body []byte
	err = jsonparser.ObjectEach(response, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
		var err error
		switch string(key) {
		case "tokens_used":
			e.TokensUsed, err = jsonparser.ParseInt(value)
		case "latency_ms":
			e.LatencyMS, err = jsonparser.ParseInt(value)
		case "finish_reason":
			e.FinishReason, err = str(value, vt)
		case "model":
			e.ResponseModel, err = str(value, vt)
		case "stream":
			e.Stream = vt == jsonparser.Boolean && string(value) == "true"
		case "usage":
			if vt == jsonparser.Object {
				usage = value
			}
		case "body":
			if vt == jsonparser.Object {
				body = value
			}
		case "content":
			if opts.Conversation && vt == jsonparser.String {
				e.Excerpt = excerpt(value)
			}
		case "tool_calls":
			if opts.Conversation && vt == jsonparser.Array {
				e.ToolNames = toolNames(value)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		return nil
	})
	if err != nil {
		return bad("response: %v", err)
	}
	counts, err := usageCounts(usage, body)
	if err != nil {
		return bad("response usage: %v", err)
	}
	e.Usage = ExtractUsage(provider, e.Endpoint, counts, e.TokensUsed)
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

func str(value []byte, vt jsonparser.ValueType) (string, error) {
	if vt != jsonparser.String {
		return "", fmt.Errorf("want a string, got %s", vt)
	}
	return jsonparser.ParseString(value)
}

func readSource(value []byte, vt jsonparser.ValueType, s *source.Source) error {
	if vt != jsonparser.Object {
		return errors.New("source is not an object")
	}
	s.File, _ = jsonparser.GetString(value, "file")
	line, _ := jsonparser.GetInt(value, "line")
	s.Line = int(line)
	s.Function, _ = jsonparser.GetString(value, "function")
	return nil
}

// usageCounts gathers the token counters of a call: the stored usage, else
// the body's (OpenAI/Anthropic "usage", Gemini "usageMetadata", Ollama's
// top-level prompt_eval_count and eval_count).
func usageCounts(usage, body []byte) (map[string]int64, error) {
	counts := map[string]int64{}
	add := func(obj []byte) error {
		return jsonparser.ObjectEach(obj, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
			if vt == jsonparser.Number {
				if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
					counts[string(key)] = n
				}
			}
			return nil
		})
	}
	if usage != nil {
		return counts, add(usage)
	}
	if body == nil {
		return counts, nil
	}
	for _, k := range []string{"usage", "usageMetadata"} {
		if v, vt, _, err := jsonparser.Get(body, k); err == nil && vt == jsonparser.Object {
			return counts, add(v)
		}
	}
	for _, k := range []string{"prompt_eval_count", "eval_count"} {
		if n, err := jsonparser.GetInt(body, k); err == nil {
			counts[k] = n
		}
	}
	return counts, nil
}

// excerpt is the start of a raw JSON string value, on one line. Secrets
// are redacted before the cut (a cut key would no longer match a rule).
func excerpt(raw []byte) string {
	s, err := jsonparser.ParseString(raw)
	if err != nil {
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
