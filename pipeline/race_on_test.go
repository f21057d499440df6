//go:build race

package pipeline

// raceEnabled: the race detector (with coverage's atomic counters) slows
// the long sequential enumerations ~10x and finds nothing in them; under
// it they sample less. .ci/run runs them in full without it.
const raceEnabled = true
