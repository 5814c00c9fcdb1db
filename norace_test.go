//go:build !race

package mediamock_test

const raceEnabled = false
