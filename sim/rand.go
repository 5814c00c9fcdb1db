package sim

import "github.com/mediamock/mediamock/internal/seed"

// Rand returns the random generator of one entity, derived from the seed, a
// purpose and the entity's id, so that results never depend on the order in
// which goroutines ran.
func Rand(s uint64, purpose string, id uint64) *seed.RNG { return seed.For(s, purpose, id) }

// DeriveSeed mixes the seed, a purpose and an id into a new 64-bit seed.
func DeriveSeed(s uint64, purpose string, id uint64) uint64 { return seed.Derive(s, purpose, id) }
