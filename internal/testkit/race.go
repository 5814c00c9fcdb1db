//go:build race

package testkit

// Race is true when the race detector is on: it counts allocations of its
// own, so a test that weighs memory skips under it.
const Race = true
