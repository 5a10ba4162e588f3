//go:build !race

package record_test

// raceOn reports whether the race detector is on (see race_security_test.go).
const raceOn = false
