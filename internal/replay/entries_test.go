package replay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// TestEntriesBelongToTheirOwner: what replay keeps of a served snapshot
// lives in the Entries that served it, not in the snapshot and not in the
// process: another Entries serving the same snapshot starts empty and keeps
// its own, the nil Entries keeps nothing, and the reply is the same bytes
// every way.
func TestEntriesBelongToTheirOwner(t *testing.T) {
	it := withBody(snapshottest.OpenAIChat("stored body"))
	ix := NewIndex(loadSet(t, it))
	req, err := registry.Parse("POST", "/v1/chat/completions", http.Header{}, reqBody(t, it, map[string]any{"stream": true}))
	if err != nil {
		t.Fatal(err)
	}
	s := ix.Lookup(req.Key)
	if s == nil {
		t.Fatal("miss")
	}
	reply := func(e *Entries) string {
		rec := httptest.NewRecorder()
		if _, err := e.Respond(context.Background(), rec, req, s, Options{}); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	a, b := NewEntries(""), NewEntries("")
	want := reply(a)
	if a.lookup(s) == nil || a.lookup(s).cachedStream(false) == nil {
		t.Fatal("the serving Entries kept no stream")
	}
	if b.lookup(s) != nil {
		t.Fatal("another Entries shares the first one's entry")
	}
	if got := reply(b); got != want || b.lookup(s) == a.lookup(s) {
		t.Fatalf("second Entries: same entry %v, reply differs %v", b.lookup(s) == a.lookup(s), got != want)
	}
	var none *Entries
	if got := reply(none); got != want || none.lookup(s) != nil || none.IsCompact(s) {
		t.Fatal("the nil Entries kept something or answered differently")
	}
}
