//go:build race

package pack

// raceEnabled: the race detector slows the long sequential enumerations
// ~10x and finds nothing in them; under it they sample less. CI runs the
// whole suite once more without it (the coverage run), in full.
const raceEnabled = true
