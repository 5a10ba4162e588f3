//go:build race

package provider_test

// raceEnabled shortens the exhaustive split test under the race detector,
// which makes JSON decoding about ten times slower.
const raceEnabled = true
