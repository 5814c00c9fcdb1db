//go:build race

package contract

// race is true when the race detector is on: it makes sync.Pool drop
// what is put back, so a test that weighs allocations does not weigh them
// under it.
const race = true
