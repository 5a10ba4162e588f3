package traceforge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/traceforge/traceforge/internal/project"
	"github.com/traceforge/traceforge/internal/record"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/result"
	"github.com/traceforge/traceforge/internal/serve"
	"github.com/traceforge/traceforge/internal/source"
	"github.com/traceforge/traceforge/internal/verify"
)

// Mode says what a [Transport] does with each call.
type Mode int

// The modes. The zero value is Replay, so tests replay unless asked to
// record.
const (
	// Replay answers every call from the snapshot folder, without network
	// access or an API key. A call with no snapshot gets a 404 in the
	// provider's error shape and is reported as drift by Close.
	Replay Mode = iota
	// Record sends every call to the API and writes one snapshot per call,
	// like traceforge record.
	Record
	// RecordMissing answers calls that have a snapshot from the folder and
	// records only the others, like traceforge record --only-missing.
	RecordMissing
)

// modeInvalid is what ModeFromEnv returns for a value it does not know;
// NewTransport refuses it.
const modeInvalid Mode = -1

func (m Mode) String() string {
	switch m {
	case Replay:
		return "replay"
	case Record:
		return "record"
	case RecordMissing:
		return "missing"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ModeEnv is the environment variable ModeFromEnv reads.
const ModeEnv = "TRACEFORGE_MODE"

// ModeFromEnv returns the mode that TRACEFORGE_MODE names: "record",
// "missing" (RecordMissing) or "replay". Unset or empty means Replay, so
//
//	TRACEFORGE_MODE=record go test ./...
//
// records locally while CI replays. Any other value makes NewTransport fail.
func ModeFromEnv() Mode {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(ModeEnv))) {
	case "", "replay":
		return Replay
	case "record":
		return Record
	case "missing", "record-missing", "only-missing":
		return RecordMissing
	}
	return modeInvalid
}

// Options configure a [Transport]. The zero value replays from the
// .ai-snapshots folder of the module the working directory belongs to.
type Options struct {
	// Mode is Replay (the zero value), Record or RecordMissing.
	Mode Mode
	// Dir is the snapshot folder. Empty means .ai-snapshots in the nearest
	// folder holding go.mod, walking up from the working directory (the
	// working directory itself when there is none). The policy config
	// (.traceforge.json) is read from Dir's parent, as the CLI does.
	Dir string
	// Upstream sends recorded calls to the API (Record, RecordMissing).
	// Each call goes to the URL the client asked for, so the SDK's
	// configured base URL is the upstream. Nil means a clone of
	// http.DefaultTransport. Replay never uses it.
	Upstream http.RoundTripper
	// Root is the project root that snapshot sources are relative to.
	// Empty means the nearest folder holding go.mod (see SourceTransport).
	Root string
}

// Sentinel errors, wrapped by the *Error that NewTransport and Close return.
var (
	// ErrInvalidSet: the snapshot folder fails a static check, so the
	// transport does not start (DESIGN: replay serves only a valid set).
	ErrInvalidSet = errors.New("the snapshot set fails the static checks")
	// ErrDrift: in Replay mode, requests matched no snapshot.
	ErrDrift = errors.New("requests matched no snapshot (drift)")
	// ErrNotSnapshotted: in Record or RecordMissing mode, calls could not
	// be snapshotted (no source, upstream error, refused by the checks,
	// nondeterminism, …).
	ErrNotSnapshotted = errors.New("calls were not snapshotted")
)

// errClosed is returned by RoundTrip after Close.
var errClosed = errors.New("traceforge: RoundTrip on a closed Transport")

// Error lists what went wrong, as the traceforge CLI reports it: every
// failed check, every unmatched request with a diff against the closest
// snapshot, or every call that was not snapshotted, with what to do.
// Use errors.Is with ErrInvalidSet, ErrDrift or ErrNotSnapshotted.
type Error struct {
	Kind    error  // ErrInvalidSet, ErrDrift or ErrNotSnapshotted
	Dir     string // the snapshot folder as messages name it
	Details string // the report, one or more lines
}

func (e *Error) Error() string {
	var hint string
	switch e.Kind {
	case ErrInvalidSet:
		hint = "fix the snapshot set first (traceforge verify shows every problem); replay serves only a set that passes every check"
	case ErrDrift:
		hint = "if the change is intended, record it: " + ModeEnv + "=missing go test ./..., then commit " + e.Dir
	case ErrNotSnapshotted:
		hint = "fix the calls listed above and record again: " + ModeEnv + "=record go test ./..."
	}
	return fmt.Sprintf("traceforge: %s: %v\n%s\nhint: %s", e.Dir, e.Kind, strings.TrimRight(e.Details, "\n"), hint)
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Transport is an [http.RoundTripper] that records and replays LLM calls in
// the process itself, with no proxy: give [Transport.Client] (or the
// Transport) to the SDK, make the calls, and call [Transport.Close] at the
// end of the test. The snapshots, checks and keys are exactly those of
// traceforge record and traceforge verify; the CLI's handlers run in
// process, and streamed answers stream.
//
// Every call is attributed to the first caller outside the standard
// library, the known SDKs and traceforge itself, as [SourceTransport] does;
// a request that already carries the X-Traceforge-Source header keeps it
// (wrap the Transport in a SourceTransport with SkipPackages to look past
// a wrapper library).
//
// Several Transports, in one process or in parallel test processes, may
// record into one folder: each takes the folder's lock only around each
// snapshot it writes (waiting up to 30 s) and merges the manifest on disk,
// and none ever deletes a snapshot.
//
// A Transport is safe for concurrent use.
type Transport struct {
	mode    Mode
	display string
	handler http.Handler
	rec     *record.Recorder
	replay  *verify.ReplayServer
	checked []string // Replay: the snapshots the static checks read
	src     SourceTransport

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	once     sync.Once
	closeErr error
}

// NewTransport opens the snapshot folder for opts.Mode. In Replay and
// RecordMissing mode it first runs every static check over the folder; if
// any fails it returns an *Error wrapping ErrInvalidSet that lists them.
// Replay also fails (wrapping fs.ErrNotExist) when the folder is missing.
func NewTransport(opts Options) (*Transport, error) {
	if opts.Mode != Replay && opts.Mode != Record && opts.Mode != RecordMissing {
		return nil, fmt.Errorf("traceforge: unknown mode %v (%s=%q): want record, missing or replay", opts.Mode, ModeEnv, os.Getenv(ModeEnv))
	}
	root := opts.Root
	if root == "" {
		root = findModuleRoot()
	}
	dir := opts.Dir
	if dir == "" {
		dir = filepath.Join(root, project.DefaultDir)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("traceforge: %w", err)
	}
	display := filepath.ToSlash(dir)
	if abs, err := filepath.Abs(root); err == nil {
		if rel, ok := within(abs, dir); ok && rel != "." {
			display = rel
		}
	}
	proj, err := project.Open(dir, project.Options{Display: display})
	if err != nil {
		return nil, fmt.Errorf("traceforge: %w", err)
	}
	t := &Transport{mode: opts.Mode, display: display, src: SourceTransport{Root: opts.Root}}

	if opts.Mode == Replay {
		served := replay.NewEntries(proj.Dir)
		rep, set, err := verify.Static(verify.StaticOptions{Dir: proj.Dir, Display: display, Config: proj.Config, CanMigrate: project.CanMigrate, Serve: served})
		if errors.Is(err, verify.ErrNoSnapshotDir) {
			return nil, fmt.Errorf("traceforge: snapshot folder %s: %w (record first: %s=record go test ./...)", display, fs.ErrNotExist, ModeEnv)
		}
		if err != nil {
			return nil, fmt.Errorf("traceforge: read %s: %w", display, err)
		}
		if rep.Findings.Errors() > 0 {
			var b bytes.Buffer
			_ = render.Verify(&b, rep, "text", false)
			return nil, &Error{Kind: ErrInvalidSet, Dir: display, Details: b.String()}
		}
		t.checked = rep.Checked
		t.replay = verify.NewReplayServer(verify.ReplayOptions{Set: set, Entries: served, Display: display})
		t.handler = serve.Guard(t.replay.Handler(), nil, verify.Refuse)
		return t, nil
	}

	var onlyMissing record.OnlyMissing // record --only-missing: hits are served by replay
	if opts.Mode == RecordMissing {
		onlyMissing = replay.NewResponder(dir)
	}
	rec, err := record.New(record.Config{
		Dir:           dir,
		Display:       display,
		Check:         proj.CheckOptions(),
		OnlyMissing:   onlyMissing,
		Transport:     opts.Upstream,
		LockPerCommit: true,
		Target:        targetOf,
	})
	if err != nil {
		var inv *record.InvalidSetError
		if errors.As(err, &inv) {
			rep := &result.VerifyReport{Dir: display, Mode: "static", Findings: inv.Findings}
			var b bytes.Buffer
			_ = render.Verify(&b, rep, "text", false)
			return nil, &Error{Kind: ErrInvalidSet, Dir: display, Details: b.String()}
		}
		return nil, fmt.Errorf("traceforge: %w", err)
	}
	t.rec = rec
	t.handler = serve.Guard(rec.Handler(), nil, record.Refuse)
	return t, nil
}

// Mode returns the transport's mode.
func (t *Transport) Mode() Mode { return t.mode }

// Client returns an *http.Client that sends every request through t, for
// the SDK's HTTP-client option (go-openai: cfg.HTTPClient; openai-go and
// anthropic-sdk-go: option.WithHTTPClient).
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// targetKey carries the URL the client asked for to the recorder
// (record.Config.Target).
type targetKey struct{}

func targetOf(r *http.Request) *url.URL {
	u, _ := r.Context().Value(targetKey{}).(*url.URL)
	return u
}

// RoundTrip implements [http.RoundTripper]: it serves req with the CLI's
// handler in this process. The response is returned as soon as its header
// is written; a stream's events arrive as the handler sends them.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	closeBody := func() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
	}
	if req.URL == nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		closeBody()
		return nil, fmt.Errorf("traceforge: unsupported request URL %v: want http:// or https:// with a host", req.URL)
	}
	if err := req.Context().Err(); err != nil {
		closeBody()
		return nil, err
	}
	var src string
	if req.Header.Get(SourceHeader) == "" {
		if s, ok := t.src.caller(); ok {
			src = source.Format(s)
		}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		closeBody()
		return nil, errClosed
	}
	t.inflight.Add(1)
	t.mu.Unlock()
	return serveInProcess(t.handler, serverRequest(req, src), req, t.inflight.Done)
}

// serverRequest turns a client request into the request a server would
// see: origin-form target, a loopback Host (the handlers accept only
// those), the client's URL kept in the context for the recorder, and the
// source header added.
func serverRequest(req *http.Request, src string) *http.Request {
	u := req.URL
	target := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	in := req.Clone(context.WithValue(req.Context(), targetKey{}, target))
	in.URL = &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	if in.URL.Path == "" {
		in.URL.Path = "/"
	}
	in.RequestURI = in.URL.RequestURI()
	in.Host = "127.0.0.1"
	in.RemoteAddr = "127.0.0.1:0"
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.GetBody = nil
	if src != "" {
		in.Header.Set(SourceHeader, src)
	}
	return in
}

// Close ends the run once every call in flight has finished (including the
// rest of any response body the application closed early). In Record and
// RecordMissing mode it writes the manifest and returns an *Error wrapping
// ErrNotSnapshotted that lists every call that was refused or not
// snapshotted. In Replay mode it returns an *Error wrapping ErrDrift that
// lists every request that matched no snapshot, with a diff against the
// closest one; snapshots the run did not request are not an error (one
// test package rarely uses the whole set). Close is idempotent; RoundTrip
// fails after it.
func (t *Transport) Close() error {
	t.once.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.inflight.Wait()
		var b bytes.Buffer
		if t.replay != nil {
			seen := t.replay.Finish()
			if len(seen.Misses) == 0 {
				return
			}
			rep := &result.VerifyReport{Dir: t.display, Mode: "replay", Checked: t.checked,
				Replayed: result.Replayed{Misses: seen.Misses, Served: seen.Served, ReplayErrors: seen.ReplayErrors}}
			_ = render.Verify(&b, rep, "text", false)
			t.closeErr = &Error{Kind: ErrDrift, Dir: t.display, Details: b.String()}
			return
		}
		sum := t.rec.Finish()
		if !sum.Failed() {
			return
		}
		render.RecordProblems(&b, sum)
		t.closeErr = &Error{Kind: ErrNotSnapshotted, Dir: t.display, Details: b.String()}
	})
	return t.closeErr
}
