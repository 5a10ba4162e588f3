package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// The record rows create one file per call. On ext4 without a journal (this
// VM's root), the inode allocator skips every inode freed in the last 60 s
// (360 s while its inode-table block is still dirty) and checks each one it
// skips: right after thousands of files were deleted on the filesystem
// (a previous bench run's scratch, `make test`'s temp folders), a create
// costs 150–860 µs of kernel CPU instead of 15–50 µs, and record's
// figures measure the filesystem's state, not record. The harness
// therefore waits for creates to be cheap again before measuring record,
// and reports the cost it measured.
const (
	slowCreate     = 100 * time.Microsecond // above this, creates are slowed down
	settleLimit    = 7 * time.Minute        // longest wait (the 360 s window and some)
	settleInterval = 10 * time.Second
	settleGood     = 3 // consecutive cheap probes needed (a slowed-down folder has cheap moments)
	probeFiles     = 16
)

// createCost is the median time to create, write 1 KB to and close one new
// file in a new folder under dir. The files stay (the caller's scratch is
// removed at the end of the run): deleting them would add to what it
// measures.
func createCost(dir string) (time.Duration, error) {
	d, err := os.MkdirTemp(dir, "probe-")
	if err != nil {
		return 0, err
	}
	data := make([]byte, 1024)
	times := make([]time.Duration, 0, probeFiles)
	for i := 0; i < probeFiles; i++ {
		start := time.Now()
		f, err := os.OpenFile(filepath.Join(d, fmt.Sprintf("f%d", i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return 0, err
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return 0, fmt.Errorf("probe %s: %v %v", d, werr, cerr)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2], nil
}

// settleCreates waits (up to settleLimit) until creates under dir cost at
// most slowCreate in settleGood probes in a row, settleInterval apart, and
// returns the highest cost of those probes and how long it waited.
func settleCreates(cfg *Config, dir string) (cost, waited time.Duration, err error) {
	return settle(cfg, func() (time.Duration, error) { return createCost(dir) }, time.Sleep, settleLimit)
}

// settle probes, settleInterval apart, until settleGood probes in a row cost
// at most slowCreate or limit has passed; it returns the highest cost of the
// last settleGood probes.
func settle(cfg *Config, probe func() (time.Duration, error), sleep func(time.Duration), limit time.Duration) (cost, waited time.Duration, err error) {
	var recent []time.Duration
	for {
		c, err := probe()
		if err != nil {
			return 0, 0, err
		}
		recent = append(recent, c)
		if len(recent) > settleGood {
			recent = recent[1:]
		}
		cost = slices.Max(recent)
		if len(recent) == settleGood && cost <= slowCreate || waited >= limit {
			return cost, waited, nil
		}
		if c > slowCreate {
			cfg.logf("creating a file costs %s (ext4 skipping recently deleted inodes); waiting for it to settle before measuring record", c.Round(time.Microsecond))
		}
		sleep(settleInterval)
		waited += settleInterval
	}
}
