package replay_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/replay"
	"github.com/traceforge/traceforge/internal/snapshot"
)

const benchN = 1000

func benchIndex(b *testing.B) *replay.Index {
	b.Helper()
	dir := b.TempDir()
	if _, err := gen.WriteSet(dir, benchN); err != nil {
		b.Fatal(err)
	}
	set, err := check.CheckSet(&snapshot.Store{Dir: dir}, check.Options{}, nil)
	if err != nil || !set.Valid() {
		b.Fatalf("%v %v", err, set.Findings)
	}
	return replay.NewIndex(set)
}

// BenchmarkParse: decoding and keying one incoming call (the per-request
// work before lookup), per provider; "aliasing" is the replay server's
// registry.ParseAliasingWith (strings share the body).
func BenchmarkParse(b *testing.B) {
	for _, i := range []int{0, 1} {
		r := gen.HTTPRequest(i, false)
		for _, p := range []struct {
			name  string
			parse func(string, string, http.Header, []byte, *provider.KeyContext) (*provider.Request, error)
		}{{"copy", registry.ParseWith}, {"aliasing", registry.ParseAliasingWith}} {
			b.Run(gen.Item(i).Provider+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(r.Body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.parse(http.MethodPost, r.Path, r.Header, r.Body, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLookup: finding a snapshot by key in a 1,000-snapshot index.
func BenchmarkLookup(b *testing.B) {
	ix := benchIndex(b)
	var keys []string
	for _, s := range ix.Snapshots() {
		keys = append(keys, s.Key)
	}
	i := 0
	for b.Loop() {
		if ix.Lookup(keys[i%len(keys)]) == nil {
			b.Fatal("miss")
		}
		i++
	}
}

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

// BenchmarkServe: what the replay server does per call (parse, lookup,
// respond), plain and streamed, cycling through a 1,000-snapshot set.
func BenchmarkServe(b *testing.B) {
	ix, e := benchIndex(b), replay.NewEntries("")
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "stream"
		}
		reqs := make([]gen.Request, 64)
		for i := range reqs {
			reqs[i] = gen.HTTPRequest(i*(benchN/len(reqs)), stream)
		}
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				r := reqs[i%len(reqs)]
				i++
				req, err := registry.Parse(http.MethodPost, r.Path, r.Header, r.Body)
				if err != nil {
					b.Fatal(err)
				}
				s := ix.Lookup(req.Key)
				if s == nil {
					b.Fatal("miss")
				}
				if _, err := e.Respond(context.Background(), &discard{h: http.Header{}}, req, s, replay.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
