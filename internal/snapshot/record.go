package snapshot

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/traceforge/traceforge/internal/source"
)

// Version is the current snapshot format version.
const Version = "1.2.0"

// PreviousVersion is format 1.0.0, the first of the one-file-per-record
// layout, whose records carry no endpoint (DESIGN §12.2); snapshot migrate
// turns it into Version through 1.1.0.
const PreviousVersion = "1.0.0"

// Fields are the normalized response fields of a record (DESIGN §3, §11
// "Response fields"): what a wire format derives from a response body
// (provider.Format.Fields) and what the one equality compares
// (provider.Equal). ToolCalls and Usage are the provider's objects verbatim,
// nil when absent; Model is the served model ("" when absent).
type Fields struct {
	Content      string
	TokensUsed   int64
	FinishReason string
	ToolCalls    []any
	Usage        map[string]any
	Model        string
	// NoText marks an endpoint without generated text (embeddings): the
	// record has no content and no finish_reason (DESIGN §12.2); Content
	// and FinishReason are then "".
	NoText bool
	// NoTokens marks an answer whose API reports no token count (Gemini
	// embeddings): the record has no tokens_used, never a guessed one.
	NoTokens bool
}

// Response holds a record's response fields (DESIGN §3): the normalized
// Fields plus what only a stored record has.
type Response struct {
	Fields
	LatencyMS int64
	Stream    bool
	Body      map[string]any
	// Wire is a plain answer's body as the provider sent it, when JCS
	// cannot hold it exactly (integers beyond 2^53, DESIGN §13.4): replay
	// sends it byte for byte, and Body is then absent. "" when not kept.
	Wire string
	// Events is a stream as the provider sent it (response.wire as an
	// object, format 1.2.0, DESIGN §13.4): replay serves it event for
	// event. nil for a plain answer and for streams recorded before 1.2.0,
	// which replay synthesizes from Body.
	Events *WireStream
	// Status is an exchange's HTTP status (format 1.2.0, DESIGN §13.4); 0
	// for an LLM call's record, whose answer was a 2xx.
	Status int
}

// Record is a typed view of one validated snapshot record. Raw is the value
// every hash is computed over.
type Record struct {
	Provider       string
	ID             string
	Timestamp      string
	Source         source.Source
	Endpoint       string // key endpoint (format 1.1.0), e.g. "/v1/chat/completions"
	Request        map[string]any
	RequestHeaders map[string]any
	// KeyNormalizers names the declared key normalizers that changed the
	// record's key (format 1.1.0 "key_normalizers"); nil when none.
	KeyNormalizers []string
	// Occurrence is the record's place among identical requests of one run
	// answered in turn (format 1.2.0 "occurrence", DESIGN §13.4); 0 = the
	// first, whose record has no such field.
	Occurrence int
	Response   Response
	ParentID   string
	Turn       int
	Hash       string
	Raw        map[string]any
}

// RelPath is the record's file path inside the set: <provider>/<id>.json.
func RelPath(provider, id string) string { return provider + "/" + id + ".json" }

// Int64 reads a JSON number as an int64 (0, false if it is not an integer).
func Int64(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err == nil && f == float64(int64(f)) {
			return int64(f), true
		}
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// Float64 reads a JSON number as a float64.
func Float64(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// RecordFromValue builds the typed view of a record that has passed schema
// validation. It does not check hashes.
func RecordFromValue(provider string, v map[string]any) *Record {
	r := &Record{Provider: provider, Raw: v}
	r.ID, _ = v["id"].(string)
	r.Timestamp, _ = v["timestamp"].(string)
	r.Hash, _ = v["hash"].(string)
	if s, ok := v["source"].(map[string]any); ok {
		r.Source.File, _ = s["file"].(string)
		line, _ := Int64(s["line"])
		r.Source.Line = int(line)
		r.Source.Function, _ = s["function"].(string)
	}
	r.Endpoint, _ = v["endpoint"].(string)
	r.Request, _ = v["request"].(map[string]any)
	r.RequestHeaders, _ = v["request_headers"].(map[string]any)
	if kn, ok := v["key_normalizers"].([]any); ok {
		for _, n := range kn {
			if s, ok := n.(string); ok {
				r.KeyNormalizers = append(r.KeyNormalizers, s)
			}
		}
	}
	if n, ok := Int64(v["occurrence"]); ok {
		r.Occurrence = int(n)
	}
	if resp, ok := v["response"].(map[string]any); ok {
		if st, ok := Int64(resp["status"]); ok {
			r.Response.Status = int(st)
		}
		r.Response.Content, _ = resp["content"].(string)
		_, hasContent := resp["content"]
		_, hasTokens := resp["tokens_used"]
		r.Response.NoText, r.Response.NoTokens = !hasContent, !hasTokens
		r.Response.TokensUsed, _ = Int64(resp["tokens_used"])
		r.Response.LatencyMS, _ = Int64(resp["latency_ms"])
		r.Response.FinishReason, _ = resp["finish_reason"].(string)
		r.Response.ToolCalls, _ = resp["tool_calls"].([]any)
		r.Response.Usage, _ = resp["usage"].(map[string]any)
		r.Response.Model, _ = resp["model"].(string)
		r.Response.Stream, _ = resp["stream"].(bool)
		r.Response.Body, _ = resp["body"].(map[string]any)
		r.Response.Wire, _ = resp["wire"].(string)
		if w, ok := resp["wire"].(map[string]any); ok {
			// A base64 member that does not decode is reported by the
			// check (check.CheckDocument); the stream is then not kept.
			r.Response.Events, _ = WireStreamFromValue(w)
		}
	}
	if l, ok := v["lineage"].(map[string]any); ok {
		r.ParentID, _ = l["parent_id"].(string)
		t, _ := Int64(l["turn"])
		r.Turn = int(t)
	}
	return r
}

// ResponseValue turns Response into its stored JSON object.
func ResponseValue(resp Response) map[string]any {
	m := map[string]any{"latency_ms": resp.LatencyMS}
	if !resp.NoText {
		m["content"] = resp.Content
		m["finish_reason"] = resp.FinishReason
	}
	if !resp.NoTokens {
		m["tokens_used"] = resp.TokensUsed
	}
	if len(resp.ToolCalls) > 0 {
		m["tool_calls"] = resp.ToolCalls
	}
	if resp.Usage != nil {
		m["usage"] = resp.Usage
	}
	if resp.Model != "" {
		m["model"] = resp.Model
	}
	if resp.Stream {
		m["stream"] = true
	}
	if resp.Body != nil {
		m["body"] = resp.Body
	}
	if resp.Wire != "" {
		m["wire"] = resp.Wire
	}
	if resp.Events != nil {
		m["wire"] = resp.Events.value()
	}
	return m
}

// Lineage is a record's lineage (DESIGN §11): the id of the request it
// continues and its turn number.
type Lineage struct {
	ParentID string
	Turn     int
}

// NewRecord assembles a complete record value from its full request key
// (the id is its prefix), key endpoint, lineage (nil = none) and fields, and
// adds the record hash. The key and lineage are wire knowledge: callers use
// registry.NewRecord, which computes both. The request must already carry
// the stored normalization.
func NewRecord(key, endpoint string, lineage *Lineage, at time.Time, src source.Source, request, headers map[string]any, resp Response) (map[string]any, error) {
	rec := map[string]any{
		"id":        IDOf(key),
		"timestamp": FormatTimestamp(at),
		"source": map[string]any{
			"file":     src.File,
			"line":     int64(src.Line),
			"function": src.Function,
		},
		"endpoint": endpoint,
		"request":  request,
		"response": ResponseValue(resp),
	}
	if len(headers) > 0 {
		rec["request_headers"] = headers
	}
	if lineage != nil {
		rec["lineage"] = map[string]any{"parent_id": lineage.ParentID, "turn": int64(lineage.Turn)}
	}
	h, err := RecordHash(rec)
	if err != nil {
		return nil, err
	}
	rec["hash"] = h
	return rec, nil
}

// Rehash recomputes a record's hash in place (after an edit such as a new source).
func Rehash(rec map[string]any) error {
	h, err := RecordHash(rec)
	if err != nil {
		return err
	}
	rec["hash"] = h
	return nil
}

// FileDocument wraps one record in the file structure of the current
// version with its combined hash.
func FileDocument(rec map[string]any) (map[string]any, error) { return FileDocumentAt(Version, rec) }

// FileDocumentAt wraps one record in the file structure of format version
// (migration writes intermediate versions) with its combined hash.
func FileDocumentAt(version string, rec map[string]any) (map[string]any, error) {
	h, _ := rec["hash"].(string)
	fh, err := FileHash(version, []string{h})
	if err != nil {
		return nil, err
	}
	return map[string]any{"version": version, "snapshots": []any{rec}, "hash": fh}, nil
}

// FileRecord decodes a snapshot file's bytes (data) and returns its one
// record: the inverse of FileDocument, for a file already checked (the
// file's own hash is not verified here).
func FileRecord(data []byte) (map[string]any, error) {
	doc, err := Decode(data)
	if err != nil {
		return nil, err
	}
	m, _ := doc.(map[string]any)
	recs, _ := m["snapshots"].([]any)
	if len(recs) != 1 {
		return nil, errors.New("the file holds no single record")
	}
	rec, ok := recs[0].(map[string]any)
	if !ok {
		return nil, errors.New("the file holds no single record")
	}
	return rec, nil
}

// FormatTimestamp renders t as RFC 3339 UTC truncated to the second.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}
