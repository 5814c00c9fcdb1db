//go:build !race

package contract

const race = false
