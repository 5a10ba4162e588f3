package record

import (
	"sync"

	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/provider"
)

// defaultCounts counts what the project's request defaults (DESIGN §13.2)
// filled in during the run, for the summary.
type defaultCounts struct {
	mu        sync.Mutex
	calls     int            // calls that got at least one default
	byPointer map[string]int // pointer → calls it was set on
	order     []string       // pointers in order of first use
}

func (d *defaultCounts) add(applied []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.byPointer == nil {
		d.byPointer = map[string]int{}
	}
	for _, p := range applied {
		if d.byPointer[p] == 0 {
			d.order = append(d.order, p)
		}
		d.byPointer[p]++
	}
}

// DefaultsApplied returns how many calls the request defaults completed
// and, per JSON pointer in order of first use, how many calls it was set
// on.
func (r *Recorder) DefaultsApplied() (calls int, pointers []string, counts []int) {
	d := &r.defaulted
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.order {
		counts = append(counts, d.byPointer[p])
	}
	return d.calls, append([]string(nil), d.order...), counts
}

// applyDefaults returns body with the members the request defaults set in
// parsed.Body (parsed.DefaultsApplied) added, keeping every byte the
// application sent: what goes upstream and, decoded, what is stored. On
// failure the call is listed and forwarded as sent.
func (r *Recorder) applyDefaults(c *call, parsed *provider.Request, body []byte) ([]byte, error) {
	vals, err := defaults.Values(parsed.Body, parsed.DefaultsApplied)
	var out []byte
	if err == nil {
		out, err = defaults.EditRaw(body, parsed.DefaultsApplied, vals)
	}
	if err != nil {
		r.addProblem(&problem{Kind: KindBadRequest, Call: c.describe(), ID: parsed.ID(), Key: parsed.Key,
			Message: "the request defaults of .traceforge.json cannot be added to this body (" + err.Error() + "); forwarded as sent, not snapshotted",
			Fix:     "send the fields yourself, or report the body's shape to the traceforge maintainers"})
		return nil, err
	}
	r.defaulted.add(parsed.DefaultsApplied)
	return out, nil
}
