//go:build !race

package pack

const raceEnabled = false
