package pack

// RaceEnabled lets the external test package sample less under the race
// detector, as the internal tests do.
const RaceEnabled = raceEnabled
