//go:build race

package server

// raceEnabled reports whether the race detector is on (it distorts heap
// figures and slows bulk writes tenfold).
const raceEnabled = true
