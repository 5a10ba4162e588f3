package record

import (
	"sync"
	"time"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
)

// chainWait is the longest a chained request waits for the answer that
// minted its previous_response_id to be known: the application may send
// the next call as soon as it read the last byte of the previous answer,
// before the proxy has finished with it.
const chainWait = 10 * time.Second

// chains maps every response id this run knows — the stored body ids of the
// set, and each id an upstream answer or a served hit returned — to the
// snapshot that recorded it, so a Responses request chained by
// previous_response_id is keyed by its parent snapshot (DESIGN §12.8 "More
// settled details", §12.9 item 5).
type chains struct {
	mu       sync.Mutex
	cond     *sync.Cond
	ids      map[string]check.ChainParent
	inflight int // answers forwarded and not yet finished
}

func newChains() *chains {
	c := &chains{ids: map[string]check.ChainParent{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// add maps a response id to a snapshot; when several snapshots answered with
// the same id, the smallest snapshot id wins.
func (c *chains) add(responseID string, p check.ChainParent) {
	if responseID == "" || p.ID == "" {
		return
	}
	c.mu.Lock()
	if old, ok := c.ids[responseID]; !ok || p.ID < old.ID {
		c.ids[responseID] = p
	}
	c.mu.Unlock()
	c.cond.Broadcast()
}

// addSnapshot maps the id of a snapshot's stored response body.
func (c *chains) addSnapshot(s *check.Snapshot) {
	if id, p, ok := check.ChainParentOf(s); ok {
		c.add(id, p)
	}
}

// begin and end bracket an answer being forwarded.
func (c *chains) begin() {
	c.mu.Lock()
	c.inflight++
	c.mu.Unlock()
}

func (c *chains) end() {
	c.mu.Lock()
	c.inflight--
	c.mu.Unlock()
	c.cond.Broadcast()
}

// resolve finds the snapshot of a response id, waiting (at most chainWait)
// while answers are still in flight: one of them may be the parent.
func (c *chains) resolve(responseID string) (check.ChainParent, bool) {
	deadline := time.Now().Add(chainWait)
	timer := time.AfterFunc(chainWait, c.cond.Broadcast)
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if p, ok := c.ids[responseID]; ok {
			return p, true
		}
		if c.inflight == 0 || !time.Now().Before(deadline) {
			return check.ChainParent{}, false
		}
		c.cond.Wait()
	}
}

// keyContext returns the KeyContext of one call: each id is resolved once
// and the answer kept, so the key computed when the call arrives and the
// record written when it completes agree. missed lists the ids that
// resolved to nothing.
func (c *chains) keyContext() (kc *provider.KeyContext, missed func() []string) {
	var mu sync.Mutex
	memo := map[string]*check.ChainParent{}
	var misses []string
	kc = &provider.KeyContext{Parent: func(responseID string) (string, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if p, ok := memo[responseID]; ok {
			if p == nil {
				return "", 0, false
			}
			return p.ID, p.Turn, true
		}
		p, ok := c.resolve(responseID)
		if !ok {
			memo[responseID] = nil
			misses = append(misses, responseID)
			return "", 0, false
		}
		memo[responseID] = &p
		return p.ID, p.Turn, true
	}}
	return kc, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), misses...)
	}
}
