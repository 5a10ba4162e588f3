package harness

import (
	"fmt"
	"os"
	"path/filepath"
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

// settleCreates waits (up to settleLimit) until a create under dir costs at
// most slowCreate and returns the last cost measured and how long it
// waited.
func settleCreates(cfg *Config, dir string) (cost, waited time.Duration, err error) {
	return settle(cfg, func() (time.Duration, error) { return createCost(dir) }, time.Sleep, settleLimit)
}

// settle probes until the cost is at most slowCreate or limit has passed
// (sleeping settleInterval between probes).
func settle(cfg *Config, probe func() (time.Duration, error), sleep func(time.Duration), limit time.Duration) (cost, waited time.Duration, err error) {
	for {
		if cost, err = probe(); err != nil {
			return 0, 0, err
		}
		if cost <= slowCreate || waited >= limit {
			return cost, waited, nil
		}
		cfg.logf("creating a file costs %s (ext4 skipping recently deleted inodes); waiting for it to settle before measuring record", cost.Round(time.Microsecond))
		sleep(settleInterval)
		waited += settleInterval
	}
}
