package pack

// RaceEnabled lets the external test package sample less under the race
// detector, as the internal tests do.
const RaceEnabled = raceEnabled

// SetReadAhead turns the relations' read-ahead on or off and returns what
// puts it back.
func SetReadAhead(on bool) (restore func()) {
	was := readAheadOff
	readAheadOff = !on
	return func() { readAheadOff = was }
}
