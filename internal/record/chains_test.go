package record

import (
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/check"
)

// TestChainsWaitForAnAnswerInFlight: a chained call that arrives before the
// proxy has finished with its parent's answer (the application read the last
// byte first) waits for it; with nothing in flight an unknown id resolves to
// nothing at once; each call's KeyContext answers the same every time.
func TestChainsWaitForAnAnswerInFlight(t *testing.T) {
	c := newChains()
	start := time.Now()
	if _, ok := c.resolve("resp_unknown"); ok || time.Since(start) > time.Second {
		t.Fatalf("unknown id with nothing in flight: ok=%v after %v", ok, time.Since(start))
	}
	c.begin()
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.add("resp_1", check.ChainParent{ID: "aaaaaaaaaaaa", Turn: 1})
		c.end()
	}()
	kc, missed := c.keyContext()
	id, turn, ok := kc.Resolve("resp_1")
	if !ok || id != "aaaaaaaaaaaa" || turn != 1 {
		t.Fatalf("resolve = %q %d %v", id, turn, ok)
	}
	// The smallest snapshot id wins; the call's context keeps its answer.
	c.add("resp_1", check.ChainParent{ID: "0aaaaaaaaaaa", Turn: 3})
	if id, _, _ := kc.Resolve("resp_1"); id != "aaaaaaaaaaaa" {
		t.Errorf("a call's answer changed to %s", id)
	}
	if p, _ := c.resolve("resp_1"); p.ID != "0aaaaaaaaaaa" {
		t.Errorf("smallest id: %s", p.ID)
	}
	if _, _, ok := kc.Resolve("resp_2"); ok || len(missed()) != 1 || missed()[0] != "resp_2" {
		t.Errorf("misses %v", missed())
	}
}
