//go:build race

package audit

// raceEnabled: the race detector slows the differential tests ~10x; they
// sample less under it.
const raceEnabled = true
