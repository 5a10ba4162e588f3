//go:build race

package record_test

// raceOn: the race detector makes sync.Pool drop buffers at random, so
// allocation counts are not comparable; memory bounds are checked without it.
const raceOn = true
