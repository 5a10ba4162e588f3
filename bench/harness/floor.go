package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// FloorVerify is the static floor: it reads every file of the set, parses
// it with a validating valyala/fastjson parse (fastjson.ValidateBytes — every
// string, escape and number checked — then Parser.ParseBytes into a tree,
// which alone checks strings only lazily) and SHA-256-hashes its bytes, on
// every CPU, and nothing else: the least any checker of these files does.
// (The floor was encoding/json into an any before issue 29; that was slower
// than traceforge itself.) It returns the number of snapshot files.
func FloorVerify(dir string) (int, error) {
	var files []string
	for _, p := range []string{"openai", "anthropic"} {
		es, err := os.ReadDir(filepath.Join(dir, p))
		if err != nil {
			return 0, err
		}
		for _, e := range es {
			files = append(files, filepath.Join(dir, p, e.Name()))
		}
	}
	files = append(files, filepath.Join(dir, "manifest.json"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan string, 256)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p fastjson.Parser
			for f := range next {
				data, err := os.ReadFile(f)
				if err == nil {
					err = fastjson.ValidateBytes(data)
				}
				if err == nil {
					_, err = p.ParseBytes(data)
					sum := sha256.Sum256(data)
					_ = sum
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", f, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
	return len(files) - 1, firstErr
}

// floorAnswer is what the floor server sends for one request.
type floorAnswer struct {
	plain       []byte   // JSON body
	events      [][]byte // stream events, one write + flush each
	contentType string   // of the stream
}

// floorKey identifies a request by its path (Gemini streams only in the
// path) and body.
func floorKey(path string, body []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// FloorHandler is the replay floor: a bare net/http handler that reads the
// request body, looks its path and body up in a map built at start-up and
// writes the same bytes traceforge replay sends (the recorded body as JSON,
// or the same stream events with a flush after each; for a stream stored as
// its events, the body they assemble to or those events). Items [0, n) of
// kind; streams adds the streamed variants.
func FloorHandler(kind gen.Kind, n int, streams bool) (http.Handler, error) {
	answers := make(map[[32]byte]*floorAnswer, n*2)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	next := make(chan int, 256)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				keys, as, err := floorEntries(kind, i, streams)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				for j := range keys {
					answers[keys[j]] = as[j]
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a := answers[floorKey(r.URL.RequestURI(), buf.Bytes())]
		switch {
		case a == nil:
			http.Error(w, "no such request", http.StatusNotFound)
		case a.events == nil:
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", strconv.Itoa(len(a.plain)))
			_, _ = w.Write(a.plain)
		default:
			h := w.Header()
			h.Set("Content-Type", a.contentType)
			h.Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			f, _ := w.(http.Flusher)
			for _, ev := range a.events {
				_, _ = w.Write(ev)
				if f != nil {
					f.Flush()
				}
			}
		}
	}), nil
}

// floorEntries builds the answers of item i of kind from the generator
// alone, the way replay does: the request parsed by the wire layer (stream,
// include_usage), the answer by the snapshot's format from the body as a set
// read from disk holds it (numbers as json.Number). A stream stored as its
// events (format 1.2.0) is answered with those events written back in its
// framing, a plain request with the body they assemble to.
func floorEntries(kind gen.Kind, i int, streams bool) ([][32]byte, []*floorAnswer, error) {
	it := kind.Item(i)
	f := gen.FormatOf(it)
	body := it.Response.Body
	if ws := it.Response.Events; body == nil && ws != nil {
		var err error
		if body, err = provider.AssembleWire(f, ws); err != nil {
			return nil, nil, fmt.Errorf("item %d: %w", i, err)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, nil, err
	}
	plain := kind.HTTPRequest(i, false)
	keys := [][32]byte{floorKey(plain.Path, plain.Body)}
	as := []*floorAnswer{{plain: buf.Bytes()}}
	if streams {
		sr := kind.HTTPRequest(i, true)
		req, err := registry.Parse(http.MethodPost, sr.URLPath(), sr.Header, sr.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("item %d: %w", i, err)
		}
		var ev eventWriter
		if ws := it.Response.Events; ws != nil {
			ev, err = storedEvents(f, ws, req.IncludeUsage)
		} else {
			ev, err = synthesizedEvents(f, buf.Bytes(), req.IncludeUsage)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("item %d: %w", i, err)
		}
		keys = append(keys, floorKey(sr.Path, sr.Body))
		as = append(as, &floorAnswer{events: ev, contentType: f.StreamContentType()})
	}
	return keys, as, nil
}

// synthesizedEvents is the stream f synthesizes from the body encoded in
// plain, one event per write.
func synthesizedEvents(f provider.Format, plain []byte, includeUsage bool) (eventWriter, error) {
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, err
	}
	var ev eventWriter
	err := f.SynthesizeStream(body, includeUsage, &ev, nil)
	return ev, err
}

// storedEvents are the events of a stored stream written back in f's
// framing, one each. The floor does not strip a usage chunk the recording
// proxy asked for (replay does, for a request that does not ask for it):
// such a request is refused.
func storedEvents(f provider.Format, ws *snapshot.WireStream, includeUsage bool) (eventWriter, error) {
	if _, ok := f.(provider.UsageInjector); ok && !includeUsage {
		return nil, fmt.Errorf("the floor serves %s streams stored as events only to requests asking for usage", f.Endpoint())
	}
	fr := provider.FramingOf(f)
	ev := make(eventWriter, 0, len(ws.Events))
	for j := range ws.Events {
		b, err := fr.AppendEvent(nil, &ws.Events[j])
		if err != nil {
			return nil, err
		}
		ev = append(ev, b)
	}
	return ev, nil
}

type eventWriter [][]byte

func (e *eventWriter) Write(p []byte) (int, error) {
	*e = append(*e, bytes.Clone(p))
	return len(p), nil
}
