package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"reflect"
	"strings"
	"sync"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// beginExchange prepares a call to one of a provider's exchange routes
// (DESIGN §13.4: count-tokens, files, polling, …) for recording: its
// stored request and key, and its occurrence — the how-many-th identical
// request of the run it is, counted as calls arrive, so that polling keeps
// its order. A call that cannot be snapshotted is marked skip (its
// problem is listed) and forwarded.
func (r *Recorder) beginExchange(c *call, req *http.Request, f provider.Format, e provider.Endpoint, body []byte, srcPresent bool, serr error) {
	parsed, err := registry.ParseExchange(f, e, req.URL, body)
	if err != nil {
		c.skip = true
		r.addProblem(&problem{Kind: KindBadRequest, Call: c.describe(),
			Message: "the request cannot be keyed (" + err.Error() + "); forwarded, not snapshotted",
			Fix:     "send the request as the official SDKs do"})
		return
	}
	r.mu.Lock()
	base := r.run[parsed.Key]
	if base == nil {
		base = &keyState{provider: string(parsed.Provider), rel: snapshot.RelPath(string(parsed.Provider), parsed.ID())}
		r.run[parsed.Key] = base
	}
	c.occurrence = base.occurrences
	base.occurrences++
	r.mu.Unlock()
	c.req, c.exchange, c.turn = parsed, true, 1
	key := registry.OccurrenceKey(parsed.Key, c.occurrence)
	r.markRequested(snapshot.IDOf(key))
	switch {
	case srcPresent && serr != nil:
		c.skip = true
		r.addProblem(&problem{Kind: KindNoSource, Call: c.describe(), ID: snapshot.IDOf(key), Key: key,
			Message: "malformed " + source.Header + " header (" + serr.Error() + "); forwarded, not snapshotted",
			Fix:     sourceFix(req.Header.Get("User-Agent"))})
	case !srcPresent:
		c.skip = true
		r.addProblem(&problem{Kind: KindNoSource, Call: c.describe(), ID: snapshot.IDOf(key), Key: key,
			Message: "no " + source.Header + " header: traceforge cannot tell which line made this call; forwarded, not snapshotted",
			Fix:     sourceFix(req.Header.Get("User-Agent"))})
	}
}

// exchangeTee passes an exchange's answer to the application unchanged and
// keeps a copy (up to the snapshot cap) for its record.
type exchangeTee struct {
	r           *Recorder
	c           *call
	src         io.ReadCloser
	status      int
	contentType string
	encoding    string
	buf         bytes.Buffer
	tooLarge    bool
	once        sync.Once
}

// teeExchange records an exchange's answer, whatever its status (an
// application's handling of a 404 is behaviour too).
func (r *Recorder) teeExchange(c *call, resp *http.Response) {
	t := &exchangeTee{r: r, c: c, src: resp.Body, status: resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"),
		encoding:    strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))}
	if resp.Uncompressed || t.encoding == "identity" {
		t.encoding = ""
	}
	resp.Body = t
}

func (t *exchangeTee) Read(p []byte) (int, error) {
	n, err := t.src.Read(p)
	if !t.tooLarge {
		if int64(t.buf.Len()+n) > maxSnapshot {
			t.tooLarge = true
			t.buf = bytes.Buffer{}
		} else {
			t.buf.Write(p[:n])
		}
	}
	if err != nil {
		t.once.Do(func() {
			if errors.Is(err, io.EOF) {
				t.r.completeExchange(t)
				return
			}
			t.r.addProblem(&problem{Kind: KindBroken, Call: t.c.describe(), ID: t.id(), Key: t.key(), resolvable: true,
				Message: fmt.Sprintf("the upstream answer broke off before it was complete (%v); the application saw the same; not snapshotted", err),
				Fix:     "record again"})
		})
	}
	return n, err
}

func (t *exchangeTee) Close() error {
	err := t.src.Close()
	t.once.Do(func() {
		t.r.addProblem(&problem{Kind: KindClientClosed, Call: t.c.describe(), ID: t.id(), Key: t.key(), resolvable: true,
			Message: "the application stopped reading before the answer was complete; not snapshotted",
			Fix:     "let the call finish (check the application's timeouts) and record again"})
	})
	return err
}

func (t *exchangeTee) key() string { return registry.OccurrenceKey(t.c.req.Key, t.c.occurrence) }
func (t *exchangeTee) id() string  { return snapshot.IDOf(t.key()) }

// completeExchange turns a finished exchange answer into its record.
func (r *Recorder) completeExchange(t *exchangeTee) {
	c := t.c
	latency := max(r.now().Sub(c.start).Milliseconds(), 0)
	fail := func(kind Kind, msg, fix string) {
		r.addProblem(&problem{Kind: kind, Call: c.describe(), ID: t.id(), Key: t.key(), resolvable: true, Message: msg, Fix: fix})
	}
	if t.tooLarge {
		fail(KindRefused, fmt.Sprintf("the answer is larger than the %d MiB snapshot limit; not snapshotted", maxSnapshot>>20), "make this call outside the recorded run")
		return
	}
	content := t.buf.Bytes()
	if t.encoding != "" {
		d, err := decoder(t.encoding, bytes.NewReader(content))
		if err == nil && d != nil {
			content, err = io.ReadAll(io.LimitReader(d, maxSnapshot+1))
		}
		if err != nil {
			fail(KindBadResponse, fmt.Sprintf("cannot decode the %s answer (%v); passed through, not snapshotted", t.encoding, err), "record again")
			return
		}
	}
	resp := ExchangeResponse(t.status, latency, t.contentType, content)
	r.commitExchange(c, resp)
}

// ExchangeResponse is the stored response of an exchange (DESIGN §13.4):
// {status, latency_ms, body | body_text | body_b64}, with content_type
// when the body is not JSON (replay answers with it).
func ExchangeResponse(status int, latency int64, contentType string, content []byte) map[string]any {
	resp := provider.ExchangeBody(content)
	resp["status"] = int64(status)
	resp["latency_ms"] = latency
	if _, isJSON := resp["body"]; !isJSON && contentType != "" && len(content) > 0 {
		resp["content_type"] = contentType
	}
	return resp
}

// sameExchange reports whether two stored exchange answers are the same
// answer: status, content type and body (the latency may differ).
func sameExchange(a, b map[string]any) bool {
	for _, k := range []string{"status", "content_type", "body", "body_text", "body_b64"} {
		if !reflect.DeepEqual(a[k], b[k]) {
			return false
		}
	}
	return true
}

// commitExchange writes (or keeps) the record of an exchange's answer.
// Occurrences have distinct keys, so an exchange never contradicts an
// earlier answer of the run: each is kept in its place.
func (r *Recorder) commitExchange(c *call, resp map[string]any) {
	req := c.req
	p := string(req.Provider)
	key := registry.OccurrenceKey(req.Key, c.occurrence)
	id := snapshot.IDOf(key)
	rel := snapshot.RelPath(p, id)
	r.mu.Lock()
	st := r.run[key]
	if st == nil {
		st = &keyState{provider: p, rel: rel}
		r.run[key] = st
	}
	old := r.existing[key]
	r.counts.exchanges++
	r.mu.Unlock()

	st.mu.Lock()
	defer st.mu.Unlock()
	st.answered = true
	if old != nil && old.Record != nil {
		if oldResp, _ := old.Record.Raw["response"].(map[string]any); oldResp != nil && sameExchange(oldResp, snapshotValue(resp)) {
			st.recHash, st.source, st.kept = old.Record.Hash, old.Record.Source, true
			st.setOK()
			st.seeSource(c.src, c.describe())
			r.count(func(c *counts) { c.unchanged++ })
			return
		}
	}
	rec := map[string]any{
		"id":        id,
		"timestamp": snapshot.FormatTimestamp(c.arrival),
		"source": map[string]any{
			"file":     c.src.File,
			"line":     int64(c.src.Line),
			"function": c.src.Function,
		},
		"endpoint": string(req.Endpoint),
		"request":  req.Body,
		"response": resp,
	}
	if c.occurrence > 0 {
		rec["occurrence"] = int64(c.occurrence)
	}
	if err := snapshot.Rehash(rec); err != nil {
		r.addProblem(&problem{Kind: KindRefused, Call: c.describe(), ID: id, Key: key,
			Message: "cannot build the snapshot: " + err.Error(), Fix: "report this to the traceforge maintainers"})
		return
	}
	if !r.write(c.describe(), p, id, key, rec, &check.Built{Key: key, BaseKey: req.Key}) {
		return
	}
	st.recHash, st.source = recordHash(rec), c.src
	st.seeSource(c.src, c.describe())
	st.setOK()
	if old != nil {
		r.count(func(c *counts) { c.changed++ })
		r.logf("changed %s (%s)", path.Join(r.display, rel), c.describe())
	} else {
		r.count(func(c *counts) { c.recorded++ })
		r.logf("recorded %s (%s)", path.Join(r.display, rel), c.describe())
	}
}

// snapshotValue is v as a snapshot file holds it (numbers as json.Number),
// for comparing a new answer with a stored one.
func snapshotValue(v map[string]any) map[string]any {
	doc := map[string]any{"v": v}
	if snapshot.AsDecoded(doc) != nil {
		return v
	}
	m, _ := doc["v"].(map[string]any)
	return m
}
