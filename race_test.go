//go:build race

package mediamock_test

// raceEnabled: the race detector counts allocations of its own.
const raceEnabled = true
