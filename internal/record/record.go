// Package record is traceforge's recording proxy. It sits between an
// application and its LLM provider, forwards every call upstream on
// httputil.ReverseProxy (Rewrite + a body tee in ModifyResponse), passes
// streams through event by event while the provider package assembles the
// final message, and writes one checked snapshot per call into the set as
// each call completes (DESIGN §3–7, §10, §11).
//
// A Recorder never prints: per-call notes go to Config.Log and the outcome
// of a run is the Summary that Finish returns.
package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/ledger"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// DefaultManifestInterval is the most often the manifest is rewritten
// while calls are recorded (DESIGN §11 "Record lifecycle").
const DefaultManifestInterval = time.Second

// tempPoolSize is how many temp files per provider folder a run keeps
// created ahead (snapshot.TempPool): enough for a burst of concurrent
// answers while the pool refills.
const tempPoolSize = 8

// DefaultFlushWindow is how long a deferred flush (--sync=after-answer) waits for
// more snapshots before it starts (snapshot.Flusher.SetWindow): calls close
// together then share one flush instead of paying one each. A flush (one
// syncfs) costs ~300 µs of kernel CPU here, which competes with the calls
// being answered; at 50 ms a lone fast client (a local model, a fake
// upstream) pays at most 20 flushes a second instead of 200 at 5 ms
// (BENCHMARKS.md "record"). It adds at most this much to what a power loss
// can take (docs/record.md); a killed process loses nothing more, and the
// manifest write and exit never wait for it (Flusher.Wait starts a flush
// in its window at once).
const DefaultFlushWindow = 50 * time.Millisecond

// Config configures a Recorder. Every zero value works: the zero Config
// records into ./.ai-snapshots against the public OpenAI and Anthropic APIs.
type Config struct {
	// Dir is the snapshot folder ("" = ./.ai-snapshots). It is created when
	// missing. The caller holds its lock (snapshot.Store.Lock) for the run,
	// unless LockPerCommit is set.
	Dir string
	// Display names the folder in findings and messages ("" = Dir).
	Display string
	// Upstreams are the base URLs calls are forwarded to, by provider
	// (absent or "" = the provider's Descriptor.DefaultUpstream).
	Upstreams map[provider.Name]string
	// Named are the named OpenAI-compatible upstreams (--upstream
	// NAME=URL): a call under /u/NAME/… is forwarded to URL
	// (registry.SplitNamed).
	Named map[string]string
	// Check configures the pre-write checks (the policy config).
	Check check.Options
	// OnlyMissing, when set, serves calls that already have a valid
	// snapshot from the set without contacting the upstream, and records
	// only the others (record --only-missing). New fails with an
	// *InvalidSetError when the set does not pass every static check. The
	// CLI and the Go transport set it to a replay.Responder: record does not
	// import replay.
	OnlyMissing OnlyMissing
	// (Whatever the mode, New fails with an *InvalidSetError when the set
	// is at another format version: DESIGN §12.9 item 11.)
	// Transport sends requests upstream (nil = a clone of
	// http.DefaultTransport, which honours SSL_CERT_FILE / SSL_CERT_DIR and
	// the proxy environment variables).
	Transport http.RoundTripper
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// ManifestInterval is the least time between two manifest rewrites
	// while recording (0 = DefaultManifestInterval; < 0 = only at Finish).
	ManifestInterval time.Duration
	// Log receives one line per noteworthy event (nil = discarded). Every
	// line is redacted.
	Log io.Writer
	// Sync says when a snapshot file is made durable against power loss
	// ("" = SyncAfterAnswer). Either way its complete bytes are renamed
	// into place before the answer's last byte reaches the application,
	// which survives the recorder being killed at any moment. A
	// LockPerCommit recorder always syncs before the answer: it merges the
	// manifest on disk under the lock at each commit, and a manifest must
	// never list a file that is not durable.
	Sync Sync
	// FlushWindow is how long a deferred flush (SyncAfterAnswer) waits for
	// more snapshots to share it (0 = DefaultFlushWindow).
	FlushWindow time.Duration

	// LockPerCommit is for a recorder that does not hold the set's lock for
	// the whole run, so that several processes can record into one folder
	// at once (the Go transport: `go test ./...` runs packages in parallel;
	// DESIGN §11 "Go transport"). The recorder takes the lock itself,
	// waiting up to LockTimeout, while New reads the set and around each
	// commit: the snapshot file is written, then the manifest on disk is
	// re-read, merged with it and rewritten, all before the lock is
	// released. ManifestInterval is then unused. Such a recorder never
	// removes anything (Prune refuses), and a call whose answer equals the
	// stored one moves the stored source only to a smaller one or to
	// another line of the same function, so that processes making the same
	// call from different places do not rewrite it back and forth.
	LockPerCommit bool
	// LockTimeout bounds each wait for the lock with LockPerCommit
	// (0 = DefaultLockTimeout).
	LockTimeout time.Duration
	// Target, when set and non-nil for a call, is that call's exact
	// upstream URL (scheme, host, path and query), instead of the
	// provider's upstream base URL followed by the path the application
	// called. The in-process Go transport uses it: there the URL the SDK
	// asked for already names the API.
	Target func(req *http.Request) *url.URL
}

// Sync is when a snapshot file is made durable against power loss (an OS
// crash), DESIGN §2.
type Sync string

// The Sync modes.
const (
	// SyncAfterAnswer (the default): the file is renamed into place before
	// the answer completes, and fsync'd off the answer's path, one flush
	// for every file renamed meanwhile; the recorder waits for every flush
	// before each manifest write and before Finish returns. An OS crash
	// within a few milliseconds of an answer may lose that file (verify
	// names it; `snapshot reindex` repairs the manifest).
	SyncAfterAnswer Sync = "after-answer"
	// SyncBeforeAnswer: the file and its folder are fsync'd before the
	// answer completes, so every answer the application saw is on disk
	// even after a power loss (about 0.6 ms more per call on a typical
	// SSD).
	SyncBeforeAnswer Sync = "before-answer"
)

// ParseSync reads a --sync value ("" = SyncAfterAnswer).
func ParseSync(s string) (Sync, error) {
	switch Sync(s) {
	case "", SyncAfterAnswer:
		return SyncAfterAnswer, nil
	case SyncBeforeAnswer:
		return SyncBeforeAnswer, nil
	}
	return "", fmt.Errorf("unknown sync mode %q: use %s or %s", s, SyncAfterAnswer, SyncBeforeAnswer)
}

// DefaultLockTimeout is the longest a LockPerCommit recorder waits for the
// set's lock.
const DefaultLockTimeout = 30 * time.Second

// InvalidSetError is returned by New in OnlyMissing mode when the set fails
// a static check, and in every mode when the set is at another format
// version (Version set; the findings carry the §8 text): the command must
// not start (DESIGN §11 "Replay", §12.9 item 11).
type InvalidSetError struct {
	Display  string
	Findings finding.Findings
	Version  bool
}

func (e *InvalidSetError) Error() string {
	if e.Version {
		return fmt.Sprintf("%s is not at format %s; record never adds to a set of another version", e.Display, snapshot.Version)
	}
	return fmt.Sprintf("%s fails %d static check(s); --only-missing serves only a valid set", e.Display, e.Findings.Errors())
}

// Recorder is the recording proxy. Create it with New, serve Handler, then
// call Finish once the application is done.
type Recorder struct {
	cfg       Config
	store     *snapshot.Store
	display   string
	upstreams map[provider.Name]*url.URL // every provider's base URL
	named     map[string]*url.URL        // the named upstreams (Config.Named)
	transport http.RoundTripper
	proxy     *httputil.ReverseProxy
	handler   http.Handler
	now       func() time.Time
	started   time.Time
	chains    *chains       // response ids → snapshots (Responses chains)
	defaulted defaultCounts // what the request defaults filled in (defaults.go)

	mu         sync.Mutex
	existing   map[string]*check.Snapshot // valid snapshots at start, by key
	byID       map[string]idOwner         // every known id → its key
	entries    map[string]snapshot.ManifestEntry
	allRels    map[string]string // every snapshot file on disk at start: rel → id
	run        map[string]*keyState
	requested  map[string]bool // ids requested in this run
	problems   []*problem
	problemIdx map[string]*problem
	counts     counts
	totals     *ledger.Totals // the upstream calls answered in this run (DESIGN §12.6)
	dirty      bool           // the run storage's manifest is behind r.entries
	storage    storage        // how the folder is read and written (storage.go)
	// flusher makes renamed files durable after their answers (Sync
	// SyncAfterAnswer, run storage); nil when each write syncs itself.
	flusher *snapshot.Flusher

	logMu        sync.Mutex
	mmu          sync.Mutex // serializes manifest writes
	lastManifest *snapshot.Manifest
	manifestErr  error

	stop     chan struct{}
	flushed  chan struct{}
	finishMu sync.Mutex
	summary  *result.RecordSummary
}

type idOwner struct {
	key, rel string
}

// keyState is what this run knows about one request key. mu serializes the
// commits of the key; ok is also read under Recorder.mu (summary).
type keyState struct {
	mu       sync.Mutex
	provider string
	rel      string
	answered bool            // a complete answer arrived
	fields   snapshot.Fields // the first complete answer
	okFlag   atomic.Bool     // the key has a good snapshot (written, kept or served)
	source   source.Source   // the source of the stored record
	recHash  string          // the stored record's hash ("" = no file of this run's: served, or none)
	kept     bool            // the stored file is the one found at start
	// The smallest source this run's calls with the stored answer came
	// from, and the call that sent it; settleSources stores it at the end.
	seen      bool
	minSource source.Source
	minCall   string
	// occurrences counts the exchange calls of this request key that
	// arrived so far in the run (their occurrences, DESIGN §13.4); r.mu
	// is held.
	occurrences int
	// answers counts the complete answers of this LLM request in the run,
	// and last is the latest one kept as an occurrence (hasLast; else the
	// first, fields): an answer that differs from it in meaning is the
	// next occurrence (occurrence.go). st.mu is held.
	answers int
	last    snapshot.Fields
	hasLast bool
}

// seeSource notes that a call from src got the stored answer. st.mu is held.
func (s *keyState) seeSource(src source.Source, call string) {
	if !s.seen || src.Less(s.minSource) {
		s.seen, s.minSource, s.minCall = true, src, call
	}
}

func (s *keyState) isOK() bool { return s.okFlag.Load() }
func (s *keyState) setOK()     { s.okFlag.Store(true) }

type counts struct {
	calls, recorded, changed, sourceUpdated, unchanged, served int
	tokens                                                     int64
	exchanges                                                  int // exchange answers (DESIGN §13.4), counted apart from LLM calls
}

// New loads the snapshot set of cfg.Dir (the set's valid snapshots are what
// re-recording compares against) and returns a Recorder. The caller should
// hold the set's lock. It starts the periodic manifest writer; call Finish.
func New(cfg Config) (*Recorder, error) {
	r := &Recorder{
		cfg:        cfg,
		now:        cfg.Now,
		existing:   map[string]*check.Snapshot{},
		chains:     newChains(),
		byID:       map[string]idOwner{},
		entries:    map[string]snapshot.ManifestEntry{},
		allRels:    map[string]string{},
		run:        map[string]*keyState{},
		requested:  map[string]bool{},
		problemIdx: map[string]*problem{},
		stop:       make(chan struct{}),
		flushed:    make(chan struct{}),
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.started = r.now()
	// Once per process (~15 ms), before a call can arrive: the first call
	// would otherwise pay for the compilation of the schemas it is checked
	// against.
	if err := check.WarmSchemas(); err != nil {
		return nil, fmt.Errorf("compile the embedded schemas: %w", err)
	}
	var prices map[string]check.Price
	if cfg.Check.Config != nil {
		prices = cfg.Check.Config.Prices
	}
	r.totals = ledger.NewTotals(prices)
	dir := cfg.Dir
	if dir == "" {
		dir = snapshot.DefaultDir
	}
	r.store = &snapshot.Store{Dir: dir}
	r.display = cfg.Display
	if r.display == "" {
		r.display = filepath.ToSlash(dir)
	}
	var err error
	r.named = map[string]*url.URL{}
	for name, u := range cfg.Named {
		if err := registry.ValidUpstreamName(name); err != nil {
			return nil, err
		}
		if r.named[name], err = serve.ParseUpstream(u, ""); err != nil {
			return nil, fmt.Errorf("upstream %s: %w", name, err)
		}
	}
	r.upstreams = map[provider.Name]*url.URL{}
	for _, d := range registry.Providers() {
		if cfg.Upstreams[d.Name] == "" && d.DefaultUpstream == "" {
			continue // none given and none by default: its calls are refused (noUpstream)
		}
		if r.upstreams[d.Name], err = serve.ParseUpstream(cfg.Upstreams[d.Name], d.DefaultUpstream); err != nil {
			return nil, fmt.Errorf("%s upstream: %w", d.Name, err)
		}
	}
	r.transport = cfg.Transport
	if r.transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		r.transport = t
	}
	if _, err := ParseSync(string(cfg.Sync)); err != nil {
		return nil, err
	}
	r.storage = newStorage(r)
	if !cfg.LockPerCommit {
		// The run is the folder's only writer: snapshot files are written
		// into temp files created ahead, off the answers' path.
		r.store.Temps = snapshot.NewTempPool(tempPoolSize)
	}
	if !cfg.LockPerCommit && cfg.Sync != SyncBeforeAnswer {
		r.flusher = snapshot.NewFlusher(r.flushFailed)
		w := cfg.FlushWindow
		if w <= 0 {
			w = DefaultFlushWindow
		}
		r.flusher.SetWindow(w)
	}
	if err := r.storage.load(); err != nil {
		return nil, err
	}
	r.proxy = &httputil.ReverseProxy{
		Rewrite:   r.rewrite,
		Transport: preparingTransport{r.transport},
		// Streams (text/event-stream, or no Content-Length: NDJSON, a
		// chunked JSON array) are flushed on every write whatever this
		// says; an answer of known length goes out in one write at its end.
		FlushInterval:  0,
		BufferPool:     copyBuffers,
		ModifyResponse: r.modifyResponse,
		ErrorHandler:   r.errorHandler,
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	r.handler = http.HandlerFunc(r.serveHTTP)
	interval := cfg.ManifestInterval
	if interval == 0 {
		interval = DefaultManifestInterval
	}
	go r.flushLoop(interval)
	return r, nil
}

// copyBuffers lends ReverseProxy its 32 KiB copy buffers, which it would
// otherwise allocate for every answer.
var copyBuffers httputil.BufferPool = &bufferPool{}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// Upstream returns the base URL calls of provider p are forwarded to
// (the default provider's for an unknown one: registry.Default); nil for a
// provider without a default upstream that was given none (Azure OpenAI).
func (r *Recorder) Upstream(p provider.Name) *url.URL {
	if u, ok := r.upstreams[p]; ok {
		return u
	}
	if registry.Provider(p) != nil {
		return nil
	}
	return r.upstreams[registry.Default().Name]
}

// Handler is the proxy. Whoever serves it wraps it in the shared safety
// rules: serve.Guard(h, allow, Refuse) (Host check, CONNECT and
// absolute-form refusal, body cap).
func (r *Recorder) Handler() http.Handler { return r.handler }

func (r *Recorder) lockTimeout() time.Duration {
	if r.cfg.LockTimeout > 0 {
		return r.cfg.LockTimeout
	}
	return DefaultLockTimeout
}

// load reads the existing set: valid snapshots by key, every id, and the
// manifest entries to merge with.
func (r *Recorder) load() error {
	fi, err := os.Lstat(r.store.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		if r.cfg.OnlyMissing != nil {
			r.cfg.OnlyMissing.Load(nil)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", r.display)
	}
	opts := r.cfg.Check
	if r.cfg.OnlyMissing != nil {
		// Hits are served from the set: keep what replay needs, not every
		// decoded record.
		opts.Trim = r.cfg.OnlyMissing.Trim
	}
	set, err := check.CheckSet(r.store, opts, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", r.display, err)
	}
	var versions finding.Findings
	for _, f := range set.Findings {
		if f.Rule == check.RuleVersion && f.Severity == finding.Error {
			versions = append(versions, f)
		}
	}
	if len(versions) > 0 {
		// A set at another version is never extended (DESIGN §12.9 item 11).
		return &InvalidSetError{Display: r.display, Findings: versions, Version: true}
	}
	if r.cfg.OnlyMissing != nil {
		var errs finding.Findings
		for _, f := range set.Findings {
			// An empty folder (no files, no manifest yet) is an empty set.
			if f.Severity != finding.Error || (f.Rule == check.RuleManifestMissing && set.Files == 0) {
				continue
			}
			errs = append(errs, f)
		}
		if len(errs) > 0 {
			return &InvalidSetError{Display: r.display, Findings: errs}
		}
		r.cfg.OnlyMissing.Load(set)
	}
	valid := map[string]bool{}
	for _, s := range set.Snapshots {
		r.byID[s.Record.ID] = idOwner{key: s.Key, rel: s.Rel}
		if s.Errors == 0 {
			r.chains.addSnapshot(s)
			r.existing[s.Key] = s
			valid[s.Rel] = true
			r.entries[s.Rel] = snapshot.ManifestEntry{ID: s.Record.ID, Provider: s.Provider, File: s.Rel, Hash: s.FileHash}
		}
	}
	for _, rel := range set.Rels {
		_, id, _ := snapshot.ValidRelPath(rel)
		r.allRels[rel] = id
	}
	r.storage.loaded(set.Manifest)
	if m := set.Manifest; m != nil {
		r.lastManifest = m
		// Keep the entries of files this run cannot vouch for (invalid or
		// missing): record never removes anything from the set.
		for _, e := range m.Entries {
			if _, _, ok := snapshot.ValidRelPath(e.File); !ok || valid[e.File] {
				continue
			}
			if _, taken := r.entries[e.File]; !taken {
				r.entries[e.File] = e
			}
		}
	}
	return nil
}

// Refuse answers a request refused by serve.Guard in its provider's error
// shape (serve.Guard's errBody for the recording proxy).
func Refuse(w http.ResponseWriter, req *http.Request, status int, msg string) {
	provider.WriteStatusError(w, registry.ErrorFormat(req), status, "traceforge record: "+msg)
}

func (r *Recorder) logf(format string, args ...any) {
	if r.cfg.Log == nil {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintln(render.NewLineRedactor(r.cfg.Log), fmt.Sprintf(format, args...))
}
