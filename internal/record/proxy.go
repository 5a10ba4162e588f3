package record

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// call is one request going through the proxy.
type call struct {
	arrival time.Time
	start   time.Time // when it was forwarded upstream
	method  string
	path    string
	route   provider.Name     // the upstream it goes to
	req     *provider.Request // nil when the call cannot be snapshotted at all
	src     source.Source
	// skip is set when the call is forwarded but will not be snapshotted
	// (its problem is already listed).
	skip bool
	// addedUsage: the proxy added stream_options.include_usage.
	addedUsage bool
	// exchange: the call is one of a provider's exchange routes (DESIGN
	// §13.4, exchange.go), the occurrence-th identical one of the run.
	exchange   bool
	occurrence int
	original   []byte // the body as the application sent it, with the request defaults applied
	upstream   []byte // the body sent upstream
	// The key (req.Key) and the lineage are computed once, at parse time,
	// with one chains.keyContext (it resolves previous_response_id), and
	// handed to the record: turn is the lineage turn (1 = none), lin the
	// lineage (nil = none), linErr why it could not be computed.
	turn   int
	lin    *snapshot.Lineage
	linErr error
}

// describe names a call in problems and logs.
func (c *call) describe() string {
	s := c.method + " " + c.path
	if c.src.File != "" {
		s += " from " + c.src.Display()
	}
	return s
}

type ctxKey struct{}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(ctxKey{}).(*call)
	return c
}

// serveHTTP handles one call: parse, decide, forward (or serve a hit).
func (r *Recorder) serveHTTP(w http.ResponseWriter, req *http.Request) {
	arrival := r.now()
	body, err := registry.ReadHTTPBody(req) // one allocation when the length is declared
	_ = req.Body.Close()
	if err != nil {
		f := registry.ErrorFormat(req)
		if serve.IsMaxBytes(err) {
			provider.WriteStatusError(w, f, http.StatusRequestEntityTooLarge,
				fmt.Sprintf("traceforge record: request body larger than %d bytes", serve.MaxRequestBody))
			return
		}
		provider.WriteStatusError(w, f, http.StatusBadRequest, "traceforge record: cannot "+err.Error())
		return
	}
	c := &call{arrival: arrival, method: req.Method, path: req.URL.Path, original: body, upstream: body}
	srcPresent := len(req.Header.Values(source.Header)) > 0
	// The source names the call in every problem, including those of
	// calls that cannot be keyed (DESIGN §12.10.6).
	src, serr := source.Parse(req.Header.Get(source.Header))
	if srcPresent && serr == nil {
		c.src = src
	}
	req.Header.Del(source.Header)
	r.mu.Lock()
	r.counts.calls++
	r.mu.Unlock()

	format, endpoint, llm := registry.RouteURL(req.Method, req.URL) // the one routing of this call
	if llm {
		c.route = format.Provider()
	} else {
		c.route = registry.UpstreamOf(req) // DESIGN §11, §12.9 item 8
	}
	// A call under /u/NAME/ needs an upstream named NAME (--upstream).
	if name, _, ok := registry.SplitNamed(req.URL.Path); ok && r.target(req) == nil && r.named[name] == nil {
		r.refuseUnknownName(w, req, c, name)
		return
	}
	// A provider without a default upstream (Azure OpenAI) that was given
	// none cannot take the call: refused, naming the flag.
	if r.target(req) == nil && r.upstreamFor(req.URL.Path, c.route) == nil {
		r.refuseNoUpstream(w, req, c)
		return
	}
	// A credential of another provider never follows a call to its
	// upstream (SECURITY.md): on a route no provider serves, where the
	// upstream is a guess (DESIGN §11), nor to a known host of another
	// cloud.
	if cred, to, ok := r.foreignCredential(req, c.route, llm); ok {
		r.refuseForeign(w, req, c, cred, to)
		return
	}
	// traceforge's own credentials sign only a call that carries the
	// application's (SECURITY.md): never lent to a process holding none.
	if d := registry.Provider(c.route); d != nil && d.ClientCredential != nil && r.target(req) == nil && !d.ClientCredential(req) {
		r.refuseNoCredential(w, req, c, d)
		return
	}
	var xf provider.Format
	var xe provider.Endpoint
	exchange := false
	if !llm {
		xf, xe, exchange = registry.RouteExchange(req) // a provider's route around the LLM call
	} else {
		xf, xe, exchange = registry.ExchangeByBody(format, req.Method, req.URL.Path, body) // a background response
	}
	switch {
	case exchange:
		r.beginExchange(c, req, xf, xe, body, srcPresent, serr)
		if r.cfg.OnlyMissing != nil && c.req != nil {
			// --only-missing: a recorded exchange is answered from the set,
			// its occurrences in turn, like any hit.
			if s := r.cfg.OnlyMissing.Lookup(c.req); s != nil {
				r.markRequested(s.Record.ID)
				r.serveHit(w, req, c, s)
				return
			}
		}
	case !llm:
		c.skip = true
		r.addProblem(&problem{Kind: KindUnknownPath, Call: c.describe(),
			Message: registry.UnknownPath(req.Method, req.URL.Path) + "; forwarded to the " + string(c.route) + " upstream, not snapshotted",
			Fix:     "fix the client's base URL if the path is wrong; otherwise make this call outside the recorded run, or accept that record exits 1; see docs/record.md (\"What is recorded\")"})
	default:
		kc, missed := r.chains.keyContext()
		kc = provider.WithNormalizer(kc, r.cfg.Check.Config.Normalizer())
		kc = provider.WithDefaults(kc, r.cfg.Check.Config.RequestDefaults())
		parsed, perr := registry.ParseRouted(format, endpoint, req.URL.Path, req.Header, body, kc)
		if perr != nil && errors.Is(perr, provider.ErrContradictsPath) {
			// The provider would act on a request that is not what its key
			// says: refused before anything is sent (DESIGN §12.2).
			r.addProblem(&problem{Kind: KindBadRequest, Call: c.describe(),
				Message: "the request cannot be recorded (" + perr.Error() + "); answered 400, nothing was sent upstream",
				Fix:     "send the request as the official SDKs do"})
			provider.WriteStatusError(w, format, http.StatusBadRequest, "traceforge record: "+perr.Error())
			return
		}
		if perr != nil {
			c.skip = true
			r.addProblem(&problem{Kind: KindBadRequest, Call: c.describe(),
				Message: "the request body cannot be keyed (" + perr.Error() + "); forwarded, not snapshotted",
				Fix:     "send a JSON object body"})
			break
		}
		// The project's request defaults (DESIGN §13.2) filled members the
		// application left out: what goes upstream is what is stored.
		if len(parsed.DefaultsApplied) > 0 {
			if withDefaults, err := r.applyDefaults(c, parsed, body); err == nil {
				body, c.original, c.upstream = withDefaults, withDefaults, withDefaults
			} else {
				c.skip = true
			}
		}
		c.req = parsed
		c.turn = 1
		if parent, turn, ok, err := registry.LineageOf(parsed, kc); err != nil {
			c.linErr = err
		} else if ok {
			c.turn = turn
			c.lin = &snapshot.Lineage{ParentID: parent, Turn: turn}
		}
		for _, id := range missed() {
			r.logf("%s: previous_response_id %s is no answer of this run or the set: keyed verbatim, no lineage (record the whole conversation in one run)", c.describe(), id)
		}
		r.markRequested(parsed.ID())
		if r.cfg.OnlyMissing != nil {
			if s := r.cfg.OnlyMissing.Lookup(parsed); s != nil {
				r.markRequested(s.Record.ID) // differs for a header-less (migrated) snapshot
				r.serveHit(w, req, c, s)
				return
			}
		}
		if srcPresent {
			if serr != nil {
				c.skip = true
				r.addProblem(&problem{Kind: KindNoSource, Call: c.describe(), ID: parsed.ID(), Key: parsed.Key,
					Message: "malformed " + source.Header + " header (" + serr.Error() + "); forwarded, not snapshotted",
					Fix:     sourceFix(req.Header.Get("User-Agent"))})
			}
		} else {
			c.skip = true
			r.addProblem(&problem{Kind: KindNoSource, Call: c.describe(), ID: parsed.ID(), Key: parsed.Key,
				Message: "no " + source.Header + " header: traceforge cannot tell which line made this call; forwarded, not snapshotted",
				Fix:     sourceFix(req.Header.Get("User-Agent"))})
		}
		// Formats whose streams carry usage only on request get it asked
		// for (DESIGN §11); the application's stream is stripped of it.
		if inj, ok := format.(provider.UsageInjector); ok && !c.skip && parsed.Stream && !parsed.IncludeUsage {
			if up, ok := inj.InjectUsage(body); ok {
				c.upstream, c.addedUsage = up, true
			}
		}
	}
	req.Body = io.NopCloser(bytes.NewReader(c.upstream))
	req.ContentLength = int64(len(c.upstream))
	req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, c))
	c.start = r.now()
	if c.req != nil && !c.skip && !c.exchange {
		r.chains.begin()
		defer r.chains.end()
	}
	r.proxy.ServeHTTP(w, req)
}

// serveHit answers an --only-missing hit from the set.
func (r *Recorder) serveHit(w http.ResponseWriter, req *http.Request, c *call, s *check.Snapshot) {
	if err := r.cfg.OnlyMissing.Serve(req.Context(), w, c.req, s); err != nil {
		r.logf("serve %s from %s: %v", c.describe(), s.Rel, err)
	}
	r.mu.Lock()
	r.counts.served++
	if st := r.run[c.req.Key]; st == nil {
		st = &keyState{provider: s.Provider, rel: s.Rel}
		st.setOK()
		r.run[c.req.Key] = st
	}
	r.mu.Unlock()
}

// rewrite builds the outbound request. ReverseProxy has already removed
// hop-by-hop headers (including those named in Connection) and every
// X-Forwarded-* / Forwarded header; the upstream comes from the
// configuration only, never from the request.
func (r *Recorder) rewrite(pr *httputil.ProxyRequest) {
	c := callOf(pr.In.Context())
	if t := r.target(pr.In); t != nil {
		*pr.Out.URL = *t
	} else {
		r.rewriteURL(pr.In.URL, pr.Out.URL, c)
	}
	pr.Out.Host = ""
	// traceforge is not a tunnel: ReverseProxy re-adds the Upgrade it
	// stripped as hop-by-hop, and a switched protocol (h2c, websocket) would
	// turn the connection into a pipe to the upstream that nothing records.
	// Without it an upstream's 101 is refused (502) by ReverseProxy.
	pr.Out.Header.Del("Upgrade")
	pr.Out.Header.Del("Connection")
	pr.Out.Header.Del("HTTP2-Settings")
	pr.Out.Header.Del(source.Header)
	reduceAcceptEncoding(pr.Out.Header)
	if c != nil {
		b := c.upstream
		pr.Out.Body = io.NopCloser(bytes.NewReader(b))
		pr.Out.ContentLength = int64(len(b))
		pr.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
}

// target is the exact upstream URL of a call when Config.Target names one.
func (r *Recorder) target(in *http.Request) *url.URL {
	if r.cfg.Target == nil {
		return nil
	}
	t := r.cfg.Target(in)
	if t == nil || (t.Scheme != "http" && t.Scheme != "https") || t.Host == "" {
		return nil
	}
	c := *t
	c.User, c.Fragment = nil, ""
	return &c
}

// rewriteURL points out at the call's upstream base URL followed by the
// path the application called.
func (r *Recorder) rewriteURL(in, out *url.URL, c *call) {
	d := registry.Default()
	if c != nil {
		if pd := registry.Provider(c.route); pd != nil {
			d = pd
		}
	}
	base := r.upstreamFor(in.Path, d.Name)
	restPath, restRaw := namedRest(in.Path, in.EscapedPath()) // a named upstream's URL stands for /u/NAME
	if c != nil && c.req != nil {
		if up, ok := c.req.Format.(provider.UpstreamPath); ok {
			if p := up.UpstreamPath(restPath); p != restPath {
				restPath, restRaw = p, p
			}
		}
	}
	// The application's base URL on traceforge and the upstream's both
	// carry the provider's version prefix (OpenAI's /v1): map one onto
	// the other.
	restPath = d.TrimVersion(restPath)
	restRaw = d.TrimVersion(restRaw)
	out.Scheme = base.Scheme
	out.Host = base.Host
	out.Path = base.Path + restPath
	out.RawPath = ""
	if raw := base.EscapedPath() + restRaw; raw != out.EscapedPath() {
		out.RawPath = raw
	}
	switch {
	case base.RawQuery == "":
		out.RawQuery = in.RawQuery
	case in.RawQuery == "":
		out.RawQuery = base.RawQuery
	default:
		out.RawQuery = base.RawQuery + "&" + in.RawQuery
	}
}

// reduceAcceptEncoding keeps only gzip, deflate and identity (DESIGN §11),
// the encodings traceforge can decode for the snapshot. When the application
// sent none of them the header is dropped, and the transport asks for gzip
// and decodes it itself.
func reduceAcceptEncoding(h http.Header) {
	vals := h.Values("Accept-Encoding")
	if len(vals) == 0 {
		return
	}
	var keep []string
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			coding, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "deflate", "identity":
				keep = append(keep, part)
			}
		}
	}
	h.Del("Accept-Encoding")
	if len(keep) > 0 {
		h.Set("Accept-Encoding", strings.Join(keep, ", "))
	}
}

// modifyResponse decides what happens to an upstream answer: passed through
// untouched (errors, calls that are not snapshotted), or teed into the
// snapshot (and, when the proxy added include_usage, stripped of usage).
func (r *Recorder) modifyResponse(resp *http.Response) error {
	c := callOf(resp.Request.Context())
	if c == nil {
		return nil
	}
	if c.addedUsage && resp.StatusCode >= 400 && resp.StatusCode < 500 {
		retried, err := r.retryWithoutUsage(c, resp)
		if err != nil || retried {
			return err
		}
	}
	if c.skip {
		return nil
	}
	if c.exchange {
		// Every answer of an exchange is kept, non-2xx included.
		resp.Header.Set(provider.HeaderSnapshotID, snapshot.IDOf(registry.OccurrenceKey(c.req.Key, c.occurrence)))
		r.teeExchange(c, resp)
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := r.errorExcerpt(resp)
		r.addProblem(&problem{Kind: KindUpstreamError, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key, resolvable: true,
			Message: fmt.Sprintf("the upstream answered %d%s; passed to the application unchanged, not snapshotted", resp.StatusCode, msg),
			Fix:     "fix the cause (API key, quota, request) and record again; a later successful retry of the same request clears this"})
		return nil
	}
	if enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); !resp.Uncompressed && !decodable(enc) {
		// The proxy asked only for what it can decode (reduceAcceptEncoding);
		// an upstream that answers otherwise is passed through untouched —
		// never half-rewritten into an empty reply — and not snapshotted.
		r.addProblem(&problem{Kind: KindBadResponse, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key, resolvable: true,
			Message: fmt.Sprintf("the upstream answered with Content-Encoding %q, which traceforge did not ask for and cannot decode; passed to the application unchanged, not snapshotted", enc),
			Fix:     "make the upstream honour Accept-Encoding (traceforge asks only for gzip, deflate or identity), or record against another upstream"})
		return nil
	}
	resp.Header.Set(provider.HeaderSnapshotID, c.req.ID())
	t := &tee{r: r, c: c, src: resp.Body, ctx: resp.Request.Context()}
	if n := resp.ContentLength; n > 0 && n <= maxSnapshot {
		t.buf.Grow(int(n)) // the answer is copied once, not grown into
	}
	t.sse = provider.IsStream(c.req.Format, resp.Header.Get("Content-Type"))
	t.encoding = strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if resp.Uncompressed || t.encoding == "identity" {
		t.encoding = ""
	}
	if t.sse {
		t.asm = c.req.Format.NewAssembler()
		t.wire = newWireCapture(c.req.Format, func() int64 { return max(r.now().Sub(c.start).Milliseconds(), 0) })
	}
	if c.addedUsage && t.sse {
		// The application did not ask for usage: it gets the stream without
		// it, uncompressed (DESIGN §11).
		t.strip = c.req.Format.(provider.UsageInjector).NewUsageStripper(&t.pending, nil)
		if t.encoding != "" {
			t.decodeInline = true
			resp.Header.Del("Content-Encoding")
		}
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
	}
	resp.Body = t
	return nil
}

// retryWithoutUsage handles an upstream that rejects the include_usage the
// proxy added: the call is resent once exactly as the application sent it,
// that answer is passed through, and the call is not snapshotted.
func (r *Recorder) retryWithoutUsage(c *call, resp *http.Response) (bool, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(raw), rest), rest}
	if err != nil {
		return false, nil
	}
	text := string(decodeAll(raw, resp.Header.Get("Content-Encoding"), resp.Uncompressed))
	if !strings.Contains(text, "include_usage") && !strings.Contains(text, "stream_options") {
		return false, nil
	}
	_ = rest.Close()
	out := resp.Request.Clone(resp.Request.Context())
	b := c.original
	out.Body = io.NopCloser(bytes.NewReader(b))
	out.ContentLength = int64(len(b))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	nr, err := r.transport.RoundTrip(out)
	if err != nil {
		return true, err
	}
	for _, h := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Upgrade"} {
		nr.Header.Del(h)
	}
	*resp = *nr
	c.skip = true
	r.addProblem(&problem{Kind: KindUsageRejected, Call: c.describe(), ID: c.req.ID(), Key: c.req.Key,
		Message: "the upstream rejects stream_options.include_usage, so this streamed call has no token counts; resent without it and passed through, not snapshotted",
		Fix:     "record this call without streaming, or against an upstream that reports usage in streams (tokens_used is never guessed)"})
	return true, nil
}

// errorExcerpt returns ": <message>" from a JSON error body, keeping the body
// intact for the application.
func (r *Recorder) errorExcerpt(resp *http.Response) string {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(raw), rest), rest}
	if err != nil {
		return ""
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(decodeAll(raw, resp.Header.Get("Content-Encoding"), resp.Uncompressed), &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	msg := ""
	if json.Unmarshal(e.Error, &obj) == nil {
		msg = obj.Message
	} else {
		_ = json.Unmarshal(e.Error, &msg)
	}
	if msg == "" {
		return ""
	}
	// A gateway may quote the credentials it refused: scrub every value the
	// call carried before the text reaches the summary or a log.
	if out := resp.Request; out != nil {
		msg = check.RedactValues(msg, check.CredentialValues(out.Header, out.URL.RawQuery))
	}
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return fmt.Sprintf(" (%s)", msg)
}

// decodeAll decodes a complete body for inspection; on any problem it
// returns raw.
func decodeAll(raw []byte, encoding string, uncompressed bool) []byte {
	if uncompressed {
		return raw
	}
	rd, err := decoder(strings.ToLower(strings.TrimSpace(encoding)), bytes.NewReader(raw))
	if err != nil || rd == nil {
		return raw
	}
	out, err := io.ReadAll(io.LimitReader(rd, snapshot.MaxSnapshotFileSize+1))
	if err != nil && len(out) == 0 {
		return raw
	}
	return out
}

// decodable reports whether traceforge can decode a Content-Encoding: the
// ones reduceAcceptEncoding lets the application ask for.
func decodable(encoding string) bool {
	switch encoding {
	case "", "identity", "gzip", "x-gzip", "deflate":
		return true
	}
	return false
}

// errUnsupportedEncoding: the upstream used a Content-Encoding traceforge
// cannot decode.
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// decoder returns a reader of the decoded content; nil for identity.
func decoder(encoding string, rd io.Reader) (io.Reader, error) {
	switch encoding {
	case "", "identity":
		return nil, nil
	case "gzip", "x-gzip":
		return gzip.NewReader(rd)
	case "deflate":
		// HTTP's deflate is zlib-wrapped; some servers send raw deflate.
		br := &peekReader{r: rd}
		if zr, err := zlib.NewReader(br); err == nil {
			return zr, nil
		}
		return flate.NewReader(io.MultiReader(bytes.NewReader(br.seen), rd)), nil
	}
	return nil, fmt.Errorf("%w %q", errUnsupportedEncoding, encoding)
}

// peekReader remembers what was read, so a failed zlib header can be replayed.
type peekReader struct {
	r    io.Reader
	seen []byte
}

func (p *peekReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.seen = append(p.seen, b[:n]...)
	return n, err
}

// errorHandler answers when the upstream cannot be reached (or the retry
// without include_usage failed): 502 in the provider's error shape, as the
// application would see a failed connection.
func (r *Recorder) errorHandler(w http.ResponseWriter, req *http.Request, err error) {
	c := callOf(req.Context())
	f := registry.ErrorFormat(req)
	if c != nil {
		f = registry.ForProvider(c.route)
	}
	p := f.Provider()
	base := r.upstreamFor(req.URL.Path, p)
	fix := "check --" + string(p) + "-upstream, the network and SSL_CERT_FILE / SSL_CERT_DIR for a private CA"
	if t := r.target(req); t != nil {
		base = &url.URL{Scheme: t.Scheme, Host: t.Host}
		fix = "check the client's base URL, the network and SSL_CERT_FILE / SSL_CERT_DIR for a private CA"
	}
	clientGone := req.Context().Err() != nil
	if c != nil && !c.skip {
		pr := &problem{Kind: KindUnreachable, Call: c.describe(), resolvable: true,
			Message: fmt.Sprintf("upstream %s could not be reached (%s); the application got a 502, not snapshotted", serve.RedactURL(base), serve.RedactURLIn(err.Error(), base, req.URL)),
			Fix:     fix}
		if clientGone {
			pr.Kind = KindClientClosed
			pr.Message = "the application closed the connection before the answer arrived; not snapshotted"
			pr.Fix = "let the call finish (check the application's timeouts) and record again"
		}
		if c.req != nil {
			pr.ID, pr.Key = c.req.ID(), c.req.Key
		}
		r.addProblem(pr)
	}
	if clientGone {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	body := f.ErrorBody(f.ErrorType(http.StatusBadGateway), "", "traceforge record: upstream "+serve.RedactURL(base)+" could not be reached: "+serve.RedactURLIn(err.Error(), base, req.URL))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write(append(body, '\n'))
}
